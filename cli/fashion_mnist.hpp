// cli/fashion_mnist.hpp — reads Fashion-MNIST (or MNIST) from its IDX files, gzip'ed or not.
//
//   auto data = corun::cli::load_fashion_mnist("/usr/share/datasets/fashion-mnist");
//   data.train.count == 60000, data.test.count == 10000, 28 x 28 pixels, labels 0..9
//
// The files are the four of Debian's dataset-fashion-mnist package (the originals' names):
// train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
// t10k-labels-idx1-ubyte.gz. IDX: a big-endian magic (0x00000803 for unsigned-byte 3-D images,
// 0x00000801 for 1-D labels), one big-endian uint32 per dimension, then the bytes in C order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace corun::cli {

/// Labelled images: count x rows x cols pixel bytes and count labels.
struct ImageSet {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  ///< count * rows * cols, image after image
  std::vector<uint8_t> labels;  ///< count, each < classes
};

struct FashionMnist {
  ImageSet train;
  ImageSet test;
};

/// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr int kFashionMnistClasses = 10;

/// The whole (decompressed) content of a file, gzip'ed or plain. Throws corun::Error (missing, unreadable,
/// corrupt compressed data).
std::vector<uint8_t> read_maybe_gzip(const std::string& path);

/// One IDX image file and its label file; throws corun::Error naming the file and what is wrong (bad magic,
/// truncated or overlong data, counts that differ, a label >= `classes`).
ImageSet load_idx_pair(const std::string& images_path, const std::string& labels_path, int classes);

/// The training and test sets from `dir` (file names above); the error for a missing directory or file says
/// how to get it.
FashionMnist load_fashion_mnist(const std::string& dir);

}  // namespace corun::cli
