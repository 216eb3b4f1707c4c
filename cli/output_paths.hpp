// cli/output_paths.hpp — output paths checked before any work (issue 21): a long run must not find out at
// its end that --json names a missing directory, and lose everything it computed.
//
// Usage, right after the flags are parsed and before a model is built:
//   check_output_file("--json", json_path);       // a file written at the end
//   check_output_dir("--save", save_dir);         // a directory created (with parents) at the end
// Both throw corun::Error (invalid_argument, exit 1) naming the flag, the path, what is wrong and the fix.
// They test what can be tested without writing: the disk may still fill up, which the writer reports.
#pragma once

#include <string>

namespace corun::cli {

/// `path` (given with `flag`) can be written as a file: it is not a directory, and its directory exists,
/// is a directory and is writable; an existing file there is not read-only (no write permission bit, or
/// none for this user). An empty path passes (the flag was not given).
void check_output_file(const std::string& flag, const std::string& path);

/// `dir` (given with `flag`) can be created and written into: an existing `dir` is a writable directory;
/// otherwise its nearest existing ancestor is (create_directories makes the rest). Empty passes.
void check_output_dir(const std::string& flag, const std::string& dir);

}  // namespace corun::cli
