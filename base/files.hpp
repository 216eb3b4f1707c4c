// base/files.hpp — reading a whole file, and the one way corun writes a file it must never leave half
// written (results, traces, profiles, schedules, serving plans, checkpoints, .npy arrays, pictures).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace corun {

/// Opens `path` for reading when it is a regular file: O_NONBLOCK, so a FIFO is refused at once instead of
/// waiting for a writer; a directory, FIFO, device or socket is corun::Error(io_error) "'<path>' is a FIFO,
/// not a regular file". Returns the descriptor (the caller closes it).
int open_regular_file(const std::string& path);

/// The whole content of the regular file `path`. Throws corun::Error(io_error) "cannot read '<path>': <reason>".
std::string read_file(const std::string& path);

/// Replaces `path` with `contents` so that a reader (or a crash) sees either the old file or the whole new
/// one: writes a temporary file in the same directory, checks every write, fsyncs and closes it (checked),
/// renames it over `path` and fsyncs the directory. On any failure (a full disk, a directory where the file
/// should be, a read-only directory) the temporary file is removed, `path` is left as it was, and
/// corun::Error(io_error) says "cannot write <what> '<path>' (<step>): <strerror of errno>": the command
/// that called it exits 1. `what` ("trace") may be empty.
void write_file_atomically(const std::string& path, std::string_view contents, std::string_view what = {});
/// The same for a file made of several pieces (a header and a large array), written one after the other.
void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces,
                           std::string_view what = {});

/// fsync of a directory: what makes a rename or a new entry in it durable. Throws corun::Error(io_error).
void sync_directory(const std::string& dir);

}  // namespace corun
