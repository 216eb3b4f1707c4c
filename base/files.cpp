#include "base/files.hpp"

#include "base/check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace corun {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CORUN_CHECK(in.good(), Status::io_error, "cannot read '" << path << "': " << std::strerror(errno));
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size > 0) {  // a regular file: one read of the right size (no copy through a stringstream)
    text.resize(static_cast<size_t>(size));
    in.seekg(0);
    in.read(text.data(), size);
    CORUN_CHECK(in.gcount() == size, Status::io_error, "reading '" << path << "' failed");
  } else {  // a pipe or an empty file
    in.clear();
    in.seekg(0);
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  CORUN_CHECK(!in.bad(), Status::io_error, "reading '" << path << "' failed");
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

void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces,
                           std::string_view what) {
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
}

void write_file_atomically(const std::string& path, std::string_view contents, std::string_view what) {
  write_file_atomically(path, {contents}, what);
}

}  // namespace corun
