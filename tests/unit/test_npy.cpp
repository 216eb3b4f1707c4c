// .npy I/O: round trips, files laid out the way NumPy writes them, precise io_error messages for every kind
// of bad file, atomic save, and (when python3 has numpy) a cross-check with NumPy itself.
#include <corun/error.hpp>
#include <corun/npy.hpp>

#include "common/error_matchers.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using corun::NpyArray;
using corun::Shape;
using corun::Status;

class NpyTest : public corun::testing::TempDirTest {
 protected:
  NpyTest() : TempDirTest("npy") {}

  static void write_bytes(const std::string& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good());
  }
  static std::string read_bytes(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

std::vector<float> iota_data(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i) - 3.25f;
  return v;
}

std::string le32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<size_t>(i)] = static_cast<char>((u >> (8 * i)) & 0xff);
  return s;
}

// A .npy file as NumPy's format.write_array lays it out: magic, version, little-endian header length, the
// header dict padded with spaces and ending in '\n' so that data starts at a multiple of 64.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1, bool pad = true) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  if (pad) header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string s = "\x93NUMPY";
  s.push_back(static_cast<char>(major));
  s.push_back('\0');
  const size_t n = header.size();
  s.push_back(static_cast<char>(n & 0xff));
  s.push_back(static_cast<char>((n >> 8) & 0xff));
  if (major != 1) {
    s.push_back(static_cast<char>((n >> 16) & 0xff));
    s.push_back(static_cast<char>((n >> 24) & 0xff));
  }
  return s + header + data;
}

std::string floats(const std::vector<float>& v) {
  std::string s;
  for (float f : v) s += le32(f);
  return s;
}

TEST_F(NpyTest, RoundTripOneToFourDims) {
  const std::vector<Shape> shapes{Shape{7},       Shape{1},          Shape{3, 5},
                                  Shape{2, 3, 4}, Shape{2, 1, 3, 2}, Shape{1, 1, 1, 1}};
  int k = 0;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.str());
    const std::string p = path("a" + std::to_string(k++) + ".npy");
    const auto data = iota_data(s.numel());
    corun::save_npy(p, s, data.data());
    const NpyArray a = corun::load_npy(p);
    EXPECT_EQ(a.shape, s);
    EXPECT_EQ(a.data, data);
    // Data starts at a multiple of 64 bytes, as NumPy requires for version 1.0.
    const std::string bytes = read_bytes(p);
    EXPECT_EQ((bytes.size() - data.size() * 4) % 64, 0u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    EXPECT_EQ(bytes[bytes.size() - data.size() * 4 - 1], '\n');
  }
}

TEST_F(NpyTest, SpecialValuesRoundTripBitExactly) {
  std::vector<float> v{0.0f, -0.0f, INFINITY, -INFINITY, 1e-45f, 3.4028235e38f, std::nanf("")};
  corun::save_npy(path("s.npy"), Shape{7}, v.data());
  const NpyArray a = corun::load_npy(path("s.npy"));
  ASSERT_EQ(a.data.size(), v.size());
  EXPECT_EQ(std::memcmp(a.data.data(), v.data(), v.size() * 4), 0);
}

TEST_F(NpyTest, HeaderIsWhatNumpyWrites) {
  const auto data = iota_data(6);
  corun::save_npy(path("h.npy"), Shape{2, 3}, data.data());
  const std::string bytes = read_bytes(path("h.npy"));
  const size_t hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, hlen);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << header;
  EXPECT_EQ(bytes.size(), 10 + hlen + 24);
}

TEST_F(NpyTest, LoadsHandWrittenNumpyFiles) {
  // Exactly what np.save(p, np.arange(6, dtype='<f4').reshape(2, 3)) writes (NumPy >= 1.x, version 1.0).
  std::vector<float> v{0, 1, 2, 3, 4, 5};
  write_bytes(path("np23.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", floats(v)));
  NpyArray a = corun::load_npy(path("np23.npy"));
  EXPECT_EQ(a.shape, (Shape{2, 3}));
  EXPECT_EQ(a.data, v);

  // 1-D: NumPy writes "(4,)".
  write_bytes(path("np4.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", floats({1, 2, 3, 4})));
  a = corun::load_npy(path("np4.npy"));
  EXPECT_EQ(a.shape, (Shape{4}));
  EXPECT_EQ(a.data, (std::vector<float>{1, 2, 3, 4}));

  // 4-D, keys in another order, double quotes, no trailing comma, no padding.
  write_bytes(path("np4d.npy"), npy_bytes("{\"shape\": (1, 2, 1, 2), \"fortran_order\": False, \"descr\": \"<f4\"}",
                                          floats({9, 8, 7, 6}), 1, false));
  a = corun::load_npy(path("np4d.npy"));
  EXPECT_EQ(a.shape, (Shape{1, 2, 1, 2}));
  EXPECT_EQ(a.data, (std::vector<float>{9, 8, 7, 6}));

  // Version 2.0 (4-byte header length).
  write_bytes(path("v2.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", floats({1, 2, 3}), 2));
  a = corun::load_npy(path("v2.npy"));
  EXPECT_EQ(a.shape, (Shape{3}));
  EXPECT_EQ(a.data, (std::vector<float>{1, 2, 3}));

  // A NumPy scalar (shape ()) holds one element.
  write_bytes(path("scalar.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", floats({42})));
  a = corun::load_npy(path("scalar.npy"));
  EXPECT_EQ(a.shape.numel(), 1);
  EXPECT_EQ(a.data, (std::vector<float>{42}));
}

TEST_F(NpyTest, MissingFile) {
  EXPECT_CORUN_ERROR(corun::load_npy(path("nope.npy")), Status::io_error, path("nope.npy"), "cannot open");
}

TEST_F(NpyTest, Directory) {
  EXPECT_CORUN_ERROR(corun::load_npy(dir_), Status::io_error, dir_);
}

TEST_F(NpyTest, BadMagic) {
  write_bytes(path("bad.npy"), "PK\x03\x04 this is a zip, not an npy file................................");
  EXPECT_CORUN_ERROR(corun::load_npy(path("bad.npy")), Status::io_error, path("bad.npy"), "magic");
  write_bytes(path("empty.npy"), "");
  EXPECT_CORUN_ERROR(corun::load_npy(path("empty.npy")), Status::io_error, path("empty.npy"), "magic");
  write_bytes(path("short.npy"), "\x93NUM");
  EXPECT_CORUN_ERROR(corun::load_npy(path("short.npy")), Status::io_error, path("short.npy"), "magic");
}

TEST_F(NpyTest, UnsupportedVersion) {
  std::string b = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", floats({1}));
  b[6] = 9;
  write_bytes(path("v9.npy"), b);
  EXPECT_CORUN_ERROR(corun::load_npy(path("v9.npy")), Status::io_error, path("v9.npy"), "version 9");
}

TEST_F(NpyTest, WrongDtypes) {
  write_bytes(path("f8.npy"),
              npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0')));
  EXPECT_CORUN_ERROR(corun::load_npy(path("f8.npy")), Status::io_error, path("f8.npy"), "'<f8'", "float32");
  write_bytes(path("be.npy"),
              npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')));
  EXPECT_CORUN_ERROR(corun::load_npy(path("be.npy")), Status::io_error, path("be.npy"), "'>f4'", "little-endian");
  write_bytes(path("i4.npy"),
              npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')));
  EXPECT_CORUN_ERROR(corun::load_npy(path("i4.npy")), Status::io_error, path("i4.npy"), "'<i4'");
  write_bytes(path("nodescr.npy"), npy_bytes("{'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')));
  EXPECT_CORUN_ERROR(corun::load_npy(path("nodescr.npy")), Status::io_error, path("nodescr.npy"), "descr");
}

TEST_F(NpyTest, FortranOrder) {
  write_bytes(path("f.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", floats({1, 2, 3, 4})));
  EXPECT_CORUN_ERROR(corun::load_npy(path("f.npy")), Status::io_error, path("f.npy"), "Fortran");
}

TEST_F(NpyTest, TruncatedHeader) {
  const std::string full =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", floats({1, 2, 3, 4}));
  write_bytes(path("th.npy"), full.substr(0, 40));  // the header length field promises more
  EXPECT_CORUN_ERROR(corun::load_npy(path("th.npy")), Status::io_error, path("th.npy"), "truncated header");
  write_bytes(path("th2.npy"), full.substr(0, 9));  // half of the length field
  EXPECT_CORUN_ERROR(corun::load_npy(path("th2.npy")), Status::io_error, path("th2.npy"), "truncated header");
}

TEST_F(NpyTest, TruncatedData) {
  const std::string full =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", floats(iota_data(6)));
  write_bytes(path("td.npy"), full.substr(0, full.size() - 5));
  EXPECT_CORUN_ERROR(corun::load_npy(path("td.npy")), Status::io_error, path("td.npy"), "truncated data", "24 bytes",
                     "[2, 3]", "found 19");
}

TEST_F(NpyTest, TrailingBytes) {
  const std::string full =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", floats(iota_data(6)));
  write_bytes(path("tb.npy"), full + "x");
  EXPECT_CORUN_ERROR(corun::load_npy(path("tb.npy")), Status::io_error, path("tb.npy"), "trailing bytes", "[2, 3]");
}

TEST_F(NpyTest, TooManyDims) {
  write_bytes(path("5d.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 2), }", floats({1, 2})));
  EXPECT_CORUN_ERROR(corun::load_npy(path("5d.npy")), Status::io_error, path("5d.npy"), "(1, 1, 1, 1, 2)",
                     "more than 4");
}

TEST_F(NpyTest, BadShapes) {
  write_bytes(path("zero.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", ""));
  EXPECT_CORUN_ERROR(corun::load_npy(path("zero.npy")), Status::io_error, path("zero.npy"), "shape");
  write_bytes(path("list.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", floats({1, 2})));
  EXPECT_CORUN_ERROR(corun::load_npy(path("list.npy")), Status::io_error, path("list.npy"), "shape");
  write_bytes(path("word.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (two,), }", floats({1, 2})));
  EXPECT_CORUN_ERROR(corun::load_npy(path("word.npy")), Status::io_error, path("word.npy"), "two");
}

// NumPy's header grammar (a Python dict literal, integer extents only): what literal_eval plus NumPy's key
// check refuse is refused here too, with the file's name, instead of being read as some other shape.
TEST_F(NpyTest, HeaderGrammarIsNumpys) {
  struct Case {
    const char* file;
    const char* dict;
    const char* expected;  // a word of the message
  };
  const Case cases[] = {
      {"float.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (16.9, 32), }", "integers"},
      {"glued.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (16, 32garbage), }", "integers"},
      {"negative.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", "non-negative"},
      {"notuple.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (5), }", "(n,)"},
      {"leading0.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (012,), }", "leading zero"},
      {"dupkey.npy", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "twice"},
      {"extrakey.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }", "unexpected key 'x'"},
      {"noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", "'shape'"},
      {"notdict.npy", "['<f4', False, (2,)]", "dict"},
      {"after.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", "after the header"},
      {"fortran.npy", "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", "True or False"},
      {"unquoted.npy", "{descr: '<f4', 'fortran_order': False, 'shape': (2,), }", "quoted key"},
      {"nocomma.npy", "{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", "','"},
  };
  for (const Case& c : cases) {
    write_bytes(path(c.file), npy_bytes(c.dict, floats({1, 2})));
    EXPECT_CORUN_ERROR(corun::load_npy(path(c.file)), Status::io_error, path(c.file), c.expected);
  }
}

// Extents that overflow 64 bits, or a product no file can hold, are refused before any allocation; a
// header promising more data than the file has is "truncated data", again before allocating.
TEST_F(NpyTest, HugeShapesAreRefusedBeforeAllocation) {
  write_bytes(path("ovf.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 2), }", floats({1})));
  EXPECT_CORUN_ERROR(corun::load_npy(path("ovf.npy")), Status::io_error, path("ovf.npy"), "overflows 64 bits");
  write_bytes(path("prod.npy"), npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
                                          "4294967296, 4294967296), }",
                                          floats({1})));
  EXPECT_CORUN_ERROR(corun::load_npy(path("prod.npy")), Status::io_error, path("prod.npy"), "more elements");
  write_bytes(path("big.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000), }", floats({1, 2})));
  EXPECT_CORUN_ERROR(corun::load_npy(path("big.npy")), Status::io_error, path("big.npy"), "truncated data",
                     "4000000000000 bytes", "found 8");
}

// Only regular files are read: a FIFO is refused at once (no wait for a writer), like a directory.
TEST_F(NpyTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("pipe.npy").c_str(), 0600), 0);
  EXPECT_CORUN_ERROR(corun::load_npy(path("pipe.npy")), Status::io_error, path("pipe.npy"), "a FIFO",
                     "not a regular file");
  EXPECT_CORUN_ERROR(corun::load_npy(dir_), Status::io_error, dir_, "a directory");
}

TEST_F(NpyTest, SaveLeavesNoTemporaryAndOverwrites) {
  const auto a = iota_data(12);
  corun::save_npy(path("w.npy"), Shape{3, 4}, a.data());
  std::vector<float> b(12, 7.0f);
  corun::save_npy(path("w.npy"), Shape{3, 4}, b.data());  // replaces the file atomically
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "w.npy");
  const NpyArray r = corun::load_npy(path("w.npy"));
  EXPECT_EQ(r.shape, (Shape{3, 4}));
  EXPECT_EQ(r.data, b);
}

TEST_F(NpyTest, SaveIntoMissingDirectoryFails) {
  const auto a = iota_data(2);
  EXPECT_CORUN_ERROR(corun::save_npy(path("no/such/dir/w.npy"), Shape{2}, a.data()), Status::io_error,
                     path("no/such/dir/w.npy"));
  EXPECT_FALSE(fs::exists(path("no")));
}

TEST_F(NpyTest, SaveEmptyShapeFails) {
  const float x = 0.0f;
  EXPECT_CORUN_ERROR(corun::save_npy(path("e.npy"), Shape(), &x), Status::invalid_argument, "e.npy");
  EXPECT_FALSE(fs::exists(path("e.npy")));
}

// ------------------------------------------------------------------------------------ NumPy cross-check

// Debian's interpreter first: scripts/setup.sh installs python3-numpy for it, while a python3 earlier on
// PATH (pyenv, a venv) may lack numpy.
std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

bool have_numpy() { return std::system((python() + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0; }

TEST_F(NpyTest, CrossCheckWithNumpy) {
  if (!have_numpy()) GTEST_SKIP() << "python3 with numpy is not available";
  // corun -> NumPy: NumPy reads our file and checks shape, dtype and values.
  const auto a = iota_data(24);
  corun::save_npy(path("ours.npy"), Shape{2, 3, 4}, a.data());
  const std::string check = python() + " -c \"import numpy as np; a = np.load('" + path("ours.npy") +
                            "'); assert a.dtype == np.dtype('<f4'), a.dtype; assert a.shape == (2, 3, 4), a.shape; "
                            "assert (a.ravel() == np.arange(24, dtype='<f4') * 0.5 - 3.25).all()\"";
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
  // NumPy -> corun, for 1-D to 4-D.
  const std::string make = python() + " -c \"import numpy as np; d = '" + dir_ +
                           "'; [np.save(d + '/np%d.npy' % r, (np.arange(int(np.prod(s)), dtype='<f4') * 0.25)"
                           ".reshape(s)) for r, s in [(1, (5,)), (2, (2, 3)), (3, (2, 1, 3)), (4, (1, 2, 2, 2))]]\"";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  const std::vector<Shape> shapes{Shape{5}, Shape{2, 3}, Shape{2, 1, 3}, Shape{1, 2, 2, 2}};
  for (int r = 1; r <= 4; ++r) {
    const NpyArray x = corun::load_npy(path("np" + std::to_string(r) + ".npy"));
    EXPECT_EQ(x.shape, shapes[static_cast<size_t>(r - 1)]);
    for (size_t i = 0; i < x.data.size(); ++i) EXPECT_EQ(x.data[i], 0.25f * static_cast<float>(i));
  }
  // NumPy's float64 default is rejected with a clear message.
  const std::string f8 = python() + " -c \"import numpy as np; np.save('" + path("f8.npy") + "', np.zeros(3))\"";
  ASSERT_EQ(std::system(f8.c_str()), 0);
  EXPECT_CORUN_ERROR(corun::load_npy(path("f8.npy")), Status::io_error, "'<f8'");
}

}  // namespace
