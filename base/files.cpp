#include "base/files.hpp"

#include "base/check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace corun {

namespace {

// Reads are capped: corun's text inputs (JSON profiles, schedules, plans, traces) are far below this, and a
// runaway file must not be read into memory whole.
constexpr off_t kMaxReadBytes = off_t{1} << 34;  // 16 GiB

const char* file_type(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

int open_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  CORUN_CHECK(fd >= 0, Status::io_error, "cannot read '" << path << "': " << std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    detail::fail(Status::io_error, "cannot stat '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    detail::fail(Status::io_error, "'" + path + "' is " + file_type(st.st_mode) + ", not a regular file");
  }
  return fd;
}

std::string read_file(const std::string& path) {
  const int fd = open_regular_file(path);
  struct stat st {};
  (void)::fstat(fd, &st);  // succeeded a moment ago in open_regular_file
  if (st.st_size > kMaxReadBytes) {
    ::close(fd);
    detail::fail(Status::io_error, "'" + path + "' holds " + std::to_string(st.st_size) +
                                       " bytes, more than corun reads from one text file (16 GiB)");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  for (;;) {  // to the end of the file, even if it grew since fstat
    if (got == text.size()) text.resize(text.size() + 4096);
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      detail::fail(Status::io_error, "cannot read '" + path + "': " + std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

namespace {

[[noreturn]] void write_failed(std::string_view what, const std::string& path, const std::string& tmp, const char* step,
                               int err) {
  if (!tmp.empty()) ::unlink(tmp.c_str());
  detail::fail(Status::io_error, "cannot write " + (what.empty() ? std::string() : std::string(what) + " ") + "'" +
                                     path + "' (" + step + "): " + std::strerror(err));
}

}  // namespace

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CORUN_CHECK(fd >= 0, Status::io_error, "cannot open directory '" << dir << "' to sync it: " << std::strerror(errno));
  // EINVAL: the file system cannot sync directories (some FUSE and network mounts); nothing more to do.
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const int err = errno;
    ::close(fd);
    detail::fail(Status::io_error, "cannot sync directory '" + dir + "': " + std::strerror(err));
  }
  ::close(fd);
}

void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces,
                           std::string_view what) {
  // A directory under the target's name would make rename() fail only after the whole file was written.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) write_failed(what, path, "", "it is a directory", EISDIR);
  // The temporary file is in the target's directory: rename() is atomic only within one file system. Its
  // name is unique to this process and call, and O_EXCL never reuses a file left by someone else.
  static std::atomic<unsigned> serial{0};
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) write_failed(what, path, "", "creating a temporary file beside it", errno);
  for (std::string_view piece : pieces) {
    size_t done = 0;
    while (done < piece.size()) {
      const ssize_t n = ::write(fd, piece.data() + done, piece.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::close(fd);
        write_failed(what, path, tmp, "write", err);
      }
      done += static_cast<size_t>(n);
    }
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    write_failed(what, path, tmp, "fsync", err);
  }
  if (::close(fd) != 0) write_failed(what, path, tmp, "close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) write_failed(what, path, tmp, "rename", errno);
  // The new entry is durable only once the directory is: a crash right after rename must not lose it.
  sync_directory(parent_of(path));
}

void write_file_atomically(const std::string& path, std::string_view contents, std::string_view what) {
  write_file_atomically(path, {contents}, what);
}

}  // namespace corun
