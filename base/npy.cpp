// .npy reader/writer. The header is a Python dict literal, parsed with NumPy's grammar (npy_header.hpp);
// only regular files are read, and every size is checked against the file before anything is allocated.
#include <corun/npy.hpp>

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/npy_header.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace corun {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  detail::fail(Status::io_error, "'" + path + "' is not a usable .npy file: " + why);
}

}  // namespace

void save_npy(const std::string& path, const Shape& shape, const float* data) {
  CORUN_CHECK(shape.rank >= 1, Status::invalid_argument, "save_npy '" << path << "': empty shape");
  std::ostringstream dict;
  dict << "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  // NumPy's own spelling: "(5,)" for 1-D, "(2, 3)" otherwise.
  for (int i = 0; i < shape.rank; ++i) dict << shape[i] << (shape.rank == 1 ? "," : i + 1 < shape.rank ? ", " : "");
  dict << "), }";
  std::string header = dict.str();
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64, '\n' last.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');

  const char version[2] = {1, 0};
  const uint16_t hlen = static_cast<uint16_t>(header.size());
  const char hl[2] = {static_cast<char>(hlen & 0xff), static_cast<char>(hlen >> 8)};
  write_file_atomically(path, {std::string_view(kMagic, 6), std::string_view(version, 2), std::string_view(hl, 2),
                               header,
                               std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(shape.numel()) * sizeof(float))});
}

namespace {

// An open file descriptor, closed on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads up to n bytes (fewer only at the end of the file); returns how many were read.
size_t read_fully(int fd, void* dst, size_t n, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, static_cast<char*>(dst) + got, n - got);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      detail::fail(Status::io_error, "reading '" + path + "' failed: " + std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  return got;
}

std::string file_type(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

NpyArray load_npy(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; only a regular file is read.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  CORUN_CHECK(f.fd >= 0, Status::io_error, "cannot open '" << path << "': " << std::strerror(errno));
  struct stat st {};
  CORUN_CHECK(::fstat(f.fd, &st) == 0, Status::io_error, "cannot stat '" << path << "': " << std::strerror(errno));
  if (!S_ISREG(st.st_mode)) bad(path, "it is " + file_type(st.st_mode) + ", not a regular file");
  const auto file_size = static_cast<uint64_t>(st.st_size);

  char magic[8] = {};
  if (read_fully(f.fd, magic, 8, path) != 8 || std::memcmp(magic, kMagic, 6) != 0)
    bad(path, "missing the \\x93NUMPY magic string");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t hlen = 0;
  size_t prefix = 10;
  if (major == 1) {
    unsigned char b[2];
    if (read_fully(f.fd, b, 2, path) != 2) bad(path, "truncated header");
    hlen = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (read_fully(f.fd, b, 4, path) != 4) bad(path, "truncated header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
    prefix = 12;
  } else {
    bad(path, "unsupported format version " + std::to_string(major));
  }
  if (hlen > (1u << 20)) bad(path, "header length " + std::to_string(hlen) + " is implausible");
  std::string header(hlen, '\0');
  if (read_fully(f.fd, header.data(), hlen, path) != hlen) bad(path, "truncated header");

  const detail::NpyHeader h = detail::parse_npy_header(header, path);
  if (h.descr != "<f4")
    bad(path, "dtype '" + h.descr + "' is not little-endian float32 ('<f4'); convert with a.astype('<f4')");
  if (h.fortran_order) bad(path, "Fortran order is not supported; save np.ascontiguousarray(a)");
  std::vector<int64_t> dims = h.shape;
  if (dims.empty()) dims.push_back(1);  // a NumPy scalar: one element
  if (dims.size() > static_cast<size_t>(kMaxDims))
    bad(path, "shape " + h.shape_text + " has more than " + std::to_string(kMaxDims) + " dimensions");
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d <= 0) bad(path, "shape " + h.shape_text + " has an empty extent; corun tensors hold at least one element");
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count) || count > (uint64_t{1} << 60))
      bad(path, "shape " + h.shape_text + " holds more elements than any file can");
  }

  // Sizes are checked against the file before anything is allocated: a corrupt header cannot ask for more
  // memory than the file holds.
  NpyArray a;
  a.shape = Shape::of(dims.data(), static_cast<int>(dims.size()));
  const uint64_t bytes = count * sizeof(float);
  const uint64_t data_size = file_size - std::min<uint64_t>(file_size, prefix + hlen);
  if (data_size < bytes)
    bad(path, "truncated data: expected " + std::to_string(bytes) + " bytes for shape " + a.shape.str() + ", found " +
                  std::to_string(data_size));
  if (data_size > bytes) bad(path, "trailing bytes after the data of shape " + a.shape.str());
  a.data.resize(static_cast<size_t>(count));
  if (read_fully(f.fd, a.data.data(), bytes, path) != bytes)
    bad(path, "the file shrank while it was read (expected " + std::to_string(bytes) + " bytes of data)");
  return a;
}

}  // namespace corun
