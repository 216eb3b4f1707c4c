// base/files.hpp — reading a whole file, and the one way corun writes a file it must never leave half
// written (results, traces, profiles, schedules, serving plans, checkpoint manifests, .npy arrays).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace corun {

/// The whole content of `path`. Throws corun::Error(io_error) "cannot read '<path>': <reason>".
std::string read_file(const std::string& path);

/// Replaces `path` with `contents` so that a reader (or a crash) sees either the old file or the whole new
/// one: writes a temporary file in the same directory, flushes and fsyncs it, closes it (checked), and
/// renames it over `path`. On any failure the temporary file is removed and corun::Error(io_error) says
/// "cannot write <what> '<path>' (<step>): <strerror of errno>"; `what` ("trace") may be empty.
void write_file_atomically(const std::string& path, std::string_view contents, std::string_view what = {});
/// The same for a file made of several pieces (a header and a large array), written one after the other.
void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces,
                           std::string_view what = {});

}  // namespace corun
