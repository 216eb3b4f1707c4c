#include "cli/output_paths.hpp"

#include "base/check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace corun::cli {

namespace fs = std::filesystem;

namespace {

// What `p` is, without following a failure into an exception.
fs::file_status status_of(const fs::path& p) {
  std::error_code ec;
  return fs::status(p, ec);
}

// `dir` is an existing directory this process can create files in (access() also reports a read-only
// filesystem, which permission bits do not show).
void check_writable_dir(const std::string& flag, const std::string& given, const fs::path& dir) {
  const std::string shown = dir.empty() ? "." : dir.string();
  CORUN_CHECK(access(shown.c_str(), W_OK | X_OK) == 0, Status::invalid_argument,
              flag << " '" << given << "': cannot write into directory '" << shown << "' (" << std::strerror(errno)
                   << "); choose a writable location");
}

// An existing file someone made read-only is not replaced: the atomic writer renames a new file over it,
// which the directory's permissions allow, but the file's say to keep it. The mode bits are read, not
// access(), which always says yes to root.
void check_not_read_only(const std::string& flag, const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;  // absent: created
  const bool write_bit = (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0;
  CORUN_CHECK(write_bit && access(path.c_str(), W_OK) == 0, Status::invalid_argument,
              flag << " '" << path << "' is a read-only file; make it writable (chmod u+w) or choose another path");
}

}  // namespace

void check_output_file(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  const fs::path p(path);
  CORUN_CHECK(!fs::is_directory(status_of(p)), Status::invalid_argument,
              flag << " '" << path << "' is a directory; give a file name (e.g. " << (p / "out").string() << ")");
  CORUN_CHECK(p.has_filename(), Status::invalid_argument, flag << " '" << path << "' names no file; add a file name");
  const fs::path dir = p.parent_path();
  if (!dir.empty()) {
    const fs::file_status s = status_of(dir);
    CORUN_CHECK(fs::exists(s), Status::invalid_argument,
                flag << " '" << path << "': directory '" << dir.string() << "' does not exist; create it first");
    CORUN_CHECK(fs::is_directory(s), Status::invalid_argument,
                flag << " '" << path << "': '" << dir.string() << "' is not a directory");
  }
  check_writable_dir(flag, path, dir);
  check_not_read_only(flag, path);
}

void check_output_dir(const std::string& flag, const std::string& dir) {
  if (dir.empty()) return;
  fs::path p(dir);
  const fs::file_status s = status_of(p);
  if (fs::exists(s)) {
    CORUN_CHECK(fs::is_directory(s), Status::invalid_argument,
                flag << " '" << dir << "' exists and is not a directory; give a directory");
    check_writable_dir(flag, dir, p);
    return;
  }
  // Missing: the first ancestor that exists must be a directory we can create the rest in.
  for (fs::path up = p.parent_path();; up = up.parent_path()) {
    const fs::file_status a = status_of(up.empty() ? fs::path(".") : up);
    if (!fs::exists(a) && !up.empty() && up != up.parent_path()) continue;
    CORUN_CHECK(fs::is_directory(a), Status::invalid_argument,
                flag << " '" << dir << "': '" << (up.empty() ? "." : up.string())
                     << "' is not a directory, so the directory cannot be created");
    check_writable_dir(flag, dir, up);
    return;
  }
}

}  // namespace corun::cli
