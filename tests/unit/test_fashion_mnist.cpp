// The Fashion-MNIST IDX reader on small files the test writes itself (gzip'ed and plain), and its errors:
// missing files, a wrong magic, truncated data, image and label counts that differ, an out-of-range label,
// damaged gzip data.
#include "cli/fashion_mnist.hpp"
#include "common/error_matchers.hpp"
#include "common/temp_dir_test.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>

namespace corun::cli {
namespace {

using Bytes = std::vector<uint8_t>;

void put_u32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}

Bytes idx_images(uint32_t count, uint32_t rows, uint32_t cols, uint32_t magic = 0x803) {
  Bytes b;
  put_u32(b, magic);
  put_u32(b, count);
  put_u32(b, rows);
  put_u32(b, cols);
  for (uint32_t e = 0; e < count * rows * cols; ++e) b.push_back(static_cast<uint8_t>(e * 7 % 256));
  return b;
}

Bytes idx_labels(const Bytes& labels) {
  Bytes b;
  put_u32(b, 0x801);
  put_u32(b, static_cast<uint32_t>(labels.size()));
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

class FashionMnistReader : public testing::TempDirTest {
 protected:
  FashionMnistReader() : TempDirTest("fmnist") {}

  void write_plain(const std::string& name, const Bytes& b) {
    std::ofstream(path(name), std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                                      static_cast<std::streamsize>(b.size()));
  }
  void write_gz(const std::string& name, const Bytes& b) {
    gzFile f = gzopen(path(name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, b.data(), static_cast<unsigned>(b.size())), static_cast<int>(b.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
  // A complete directory: 3 training and 2 test images of 4x5.
  void write_dataset() {
    write_gz("train-images-idx3-ubyte.gz", idx_images(3, 4, 5));
    write_gz("train-labels-idx1-ubyte.gz", idx_labels({9, 0, 4}));
    write_gz("t10k-images-idx3-ubyte.gz", idx_images(2, 4, 5));
    write_gz("t10k-labels-idx1-ubyte.gz", idx_labels({1, 2}));
  }
};

TEST_F(FashionMnistReader, ReadsGzippedDirectory) {
  write_dataset();
  const FashionMnist d = load_fashion_mnist(dir_);
  EXPECT_EQ(d.train.count, 3);
  EXPECT_EQ(d.train.rows, 4);
  EXPECT_EQ(d.train.cols, 5);
  EXPECT_EQ(d.test.count, 2);
  EXPECT_EQ(d.train.labels, (Bytes{9, 0, 4}));
  EXPECT_EQ(d.test.labels, (Bytes{1, 2}));
  ASSERT_EQ(d.train.pixels.size(), 60u);
  for (size_t e = 0; e < 60; ++e) EXPECT_EQ(d.train.pixels[e], static_cast<uint8_t>(e * 7 % 256));
}

TEST_F(FashionMnistReader, ReadsPlainFiles) {
  write_plain("i", idx_images(2, 3, 3));
  write_plain("l", idx_labels({5, 6}));
  const ImageSet s = load_idx_pair(path("i"), path("l"), 10);
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(s.labels, (Bytes{5, 6}));
}

TEST_F(FashionMnistReader, MissingDirectoryAndFile) {
  EXPECT_CORUN_ERROR(load_fashion_mnist(path("nowhere")), Status::io_error, "does not exist", "dataset-fashion-mnist",
                     "--data");
  write_gz("train-images-idx3-ubyte.gz", idx_images(3, 4, 5));
  EXPECT_CORUN_ERROR(load_fashion_mnist(dir_), Status::io_error, "train-labels-idx1-ubyte.gz",
                     "dataset-fashion-mnist");
}

TEST_F(FashionMnistReader, WrongMagic) {
  write_gz("i.gz", idx_images(2, 3, 3, 0x802));
  write_gz("l.gz", idx_labels({1, 2}));
  EXPECT_CORUN_ERROR(load_idx_pair(path("i.gz"), path("l.gz"), 10), Status::io_error, "i.gz", "magic");
  // Labels given as images: the label file's magic is checked too.
  write_gz("i2.gz", idx_images(2, 3, 3));
  EXPECT_CORUN_ERROR(load_idx_pair(path("i2.gz"), path("i2.gz"), 10), Status::io_error, "magic");
}

TEST_F(FashionMnistReader, TruncatedAndOverlongData) {
  Bytes short_images = idx_images(2, 3, 3);
  short_images.pop_back();
  write_gz("i.gz", short_images);
  write_gz("l.gz", idx_labels({1, 2}));
  EXPECT_CORUN_ERROR(load_idx_pair(path("i.gz"), path("l.gz"), 10), Status::io_error, "i.gz", "18 data bytes",
                     "truncated");
  Bytes long_labels = idx_labels({1, 2});
  long_labels.push_back(3);
  write_gz("i2.gz", idx_images(2, 3, 3));
  write_gz("l2.gz", long_labels);
  EXPECT_CORUN_ERROR(load_idx_pair(path("i2.gz"), path("l2.gz"), 10), Status::io_error, "l2.gz", "2 data bytes");
  write_plain("tiny", Bytes{0, 0, 8});
  EXPECT_CORUN_ERROR(load_idx_pair(path("tiny"), path("l2.gz"), 10), Status::io_error, "too short");
}

TEST_F(FashionMnistReader, CountsDifferAndLabelOutOfRange) {
  write_gz("i.gz", idx_images(3, 2, 2));
  write_gz("l.gz", idx_labels({1, 2}));
  EXPECT_CORUN_ERROR(load_idx_pair(path("i.gz"), path("l.gz"), 10), Status::io_error, "3 images", "2 labels");
  write_gz("l3.gz", idx_labels({1, 10, 2}));
  EXPECT_CORUN_ERROR(load_idx_pair(path("i.gz"), path("l3.gz"), 10), Status::io_error, "label 10 of item 1");
}

TEST_F(FashionMnistReader, DamagedGzip) {
  write_gz("i.gz", idx_images(40, 8, 8));
  std::ifstream in(path("i.gz"), std::ios::binary);
  Bytes gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(gz.size(), 40u);
  gz.resize(gz.size() / 2);  // cut the compressed stream in the middle
  write_plain("cut.gz", gz);
  write_gz("l.gz", idx_labels(Bytes(40, 1)));
  EXPECT_CORUN_ERROR(load_idx_pair(path("cut.gz"), path("l.gz"), 10), Status::io_error, "cut.gz");
}

}  // namespace
}  // namespace corun::cli
