// IDX reader for Fashion-MNIST. zlib's gzread reads gzip'ed and plain files alike; every size and value is
// checked against the header, so a truncated download or a wrong file fails here with its name, never as
// garbage training data.
#include "cli/fashion_mnist.hpp"

#include "base/check.hpp"
#include "base/files.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace corun::cli {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension

uint32_t big_endian_u32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | uint32_t{b[at + 3]};
}

// Checks the magic and the header length; returns the dimensions.
std::vector<int64_t> idx_header(const std::vector<uint8_t>& b, const std::string& path, uint32_t magic, int dims) {
  const size_t header = 4 + 4 * static_cast<size_t>(dims);
  CORUN_CHECK(b.size() >= header, Status::io_error,
              path << ": " << b.size() << " bytes is too short for an IDX header (" << header << " bytes)");
  const uint32_t got = big_endian_u32(b, 0);
  CORUN_CHECK(got == magic, Status::io_error,
              path << ": IDX magic 0x" << std::hex << got << " is not 0x" << magic << std::dec << " (expected "
                   << (dims == 3 ? "unsigned-byte images, 3-D" : "unsigned-byte labels, 1-D")
                   << "); is this the right file?");
  std::vector<int64_t> d;
  int64_t total = 1;
  for (int k = 0; k < dims; ++k) {
    d.push_back(big_endian_u32(b, 4 + 4 * static_cast<size_t>(k)));
    total *= d.back();
  }
  CORUN_CHECK(total > 0, Status::io_error, path << ": the IDX header declares an empty tensor");
  CORUN_CHECK(b.size() == header + static_cast<size_t>(total), Status::io_error,
              path << ": the header declares " << total << " data bytes but the file has " << b.size() - header
                   << " (truncated or damaged; reinstall dataset-fashion-mnist)");
  return d;
}

}  // namespace

std::vector<uint8_t> read_maybe_gzip(const std::string& path) {
  struct stat st {};
  CORUN_CHECK(::stat(path.c_str(), &st) == 0, Status::io_error,
              "cannot open '" << path << "': " << std::strerror(errno)
                              << " (Fashion-MNIST comes with Debian's dataset-fashion-mnist package: apt-get install "
                                 "dataset-fashion-mnist, or pass --data DIR)");
  const int fd = open_regular_file(path);  // a FIFO or a directory is refused, never waited on
  gzFile f = gzdopen(fd, "rb");
  if (f == nullptr) ::close(fd);
  CORUN_CHECK(f != nullptr, Status::io_error, "cannot open '" << path << "': " << std::strerror(errno));
  std::vector<uint8_t> out;
  uint8_t chunk[1 << 16];
  for (;;) {
    const int n = gzread(f, chunk, sizeof chunk);
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      detail::fail(Status::io_error, path + ": corrupt compressed data (" + msg + ")");
    }
    if (n == 0) break;
    out.insert(out.end(), chunk, chunk + n);
  }
  // gzread stops quietly at a truncated gzip stream; gzclose reports it.
  const int rc = gzclose(f);
  CORUN_CHECK(rc == Z_OK, Status::io_error, path << ": corrupt or truncated gzip data (zlib error " << rc << ")");
  return out;
}

ImageSet load_idx_pair(const std::string& images_path, const std::string& labels_path, int classes) {
  const std::vector<uint8_t> ib = read_maybe_gzip(images_path);
  const std::vector<uint8_t> lb = read_maybe_gzip(labels_path);
  const std::vector<int64_t> id = idx_header(ib, images_path, kImagesMagic, 3);
  const std::vector<int64_t> ld = idx_header(lb, labels_path, kLabelsMagic, 1);
  CORUN_CHECK(id[0] == ld[0], Status::io_error,
              images_path << " has " << id[0] << " images but " << labels_path << " has " << ld[0]
                          << " labels: the files do not belong together");
  ImageSet s;
  s.count = id[0];
  s.rows = id[1];
  s.cols = id[2];
  s.pixels.assign(ib.begin() + 16, ib.end());
  s.labels.assign(lb.begin() + 8, lb.end());
  for (int64_t k = 0; k < s.count; ++k)
    CORUN_CHECK(s.labels[static_cast<size_t>(k)] < classes, Status::io_error,
                labels_path << ": label " << int{s.labels[static_cast<size_t>(k)]} << " of item " << k
                            << " is not below " << classes);
  return s;
}

FashionMnist load_fashion_mnist(const std::string& dir) {
  struct stat st {};
  CORUN_CHECK(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), Status::io_error,
              "Fashion-MNIST directory '" << dir
                                          << "' does not exist (install Debian's dataset-fashion-mnist package, "
                                             "which provides " << kFashionMnistDir << ", or pass --data DIR)");
  FashionMnist d;
  d.train = load_idx_pair(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz",
                          kFashionMnistClasses);
  d.test = load_idx_pair(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz",
                         kFashionMnistClasses);
  CORUN_CHECK(d.train.rows == d.test.rows && d.train.cols == d.test.cols, Status::io_error,
              dir << ": training images are " << d.train.rows << "x" << d.train.cols << " but test images are "
                  << d.test.rows << "x" << d.test.cols);
  return d;
}

}  // namespace corun::cli
