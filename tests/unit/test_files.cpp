// base/files.hpp: write_file_atomically replaces a file whole or not at all, and its failures name the path
// and the reason and leave no temporary file behind.
#include "base/files.hpp"

#include "common/error_matchers.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using corun::Status;

class AtomicWrite : public corun::testing::TempDirTest {
 protected:
  AtomicWrite() : TempDirTest("files") {}

  // Everything in the test directory, so a leftover temporary file shows.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(AtomicWrite, CreatesAndReplacesWholeFiles) {
  corun::write_file_atomically(path("a.json"), "first");
  EXPECT_EQ(corun::read_file(path("a.json")), "first");
  corun::write_file_atomically(path("a.json"), "second, longer");
  EXPECT_EQ(corun::read_file(path("a.json")), "second, longer");
  corun::write_file_atomically(path("a.json"), "");
  EXPECT_EQ(corun::read_file(path("a.json")), "");
  const std::string big(3 << 20, 'x');
  corun::write_file_atomically(path("b.npy"), {"head", big, "tail"});
  EXPECT_EQ(corun::read_file(path("b.npy")), "head" + big + "tail");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.json", "b.npy"}));
  // Readable like any file the user creates (the umask applies), not private like a mkstemp file.
  struct stat st {};
  ASSERT_EQ(::stat(path("a.json").c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(AtomicWrite, MissingDirectoryNamesThePathAndTheReason) {
  EXPECT_CORUN_ERROR(corun::write_file_atomically(path("no/such/dir/a.json"), "x"), Status::io_error,
                     "cannot write '" + path("no/such/dir/a.json") + "'", "No such file or directory");
  EXPECT_CORUN_ERROR(corun::write_file_atomically(path("no/a.json"), "x", "the profile"), Status::io_error,
                     "cannot write the profile '" + path("no/a.json") + "' (creating a temporary file beside it)");
  EXPECT_TRUE(entries().empty());
}

// We run as root, for whom a read-only directory is writable: a path under a regular file fails for
// everyone (ENOTDIR).
TEST_F(AtomicWrite, PathUnderARegularFileFails) {
  std::ofstream(path("plain")) << "not a directory";
  EXPECT_CORUN_ERROR(corun::write_file_atomically(path("plain/a.json"), "x"), Status::io_error,
                     "cannot write '" + path("plain/a.json") + "'", "Not a directory");
  EXPECT_EQ(entries(), (std::vector<std::string>{"plain"}));
}

// A directory in the target's place (which would make the rename fail after the whole file was written)
// is refused before anything is written: the old content stays and no temporary file is left.
TEST_F(AtomicWrite, FailedRenameRemovesTheTemporaryFile) {
  fs::create_directory(path("target"));
  std::ofstream(path("target/inside")) << "keep";
  EXPECT_CORUN_ERROR(corun::write_file_atomically(path("target"), "x"), Status::io_error,
                     "cannot write '" + path("target") + "' (it is a directory)");
  EXPECT_EQ(entries(), (std::vector<std::string>{"target"}));
  EXPECT_EQ(corun::read_file(path("target/inside")), "keep");
}

TEST_F(AtomicWrite, ReadFileNamesAMissingFile) {
  EXPECT_CORUN_ERROR(corun::read_file(path("nope")), Status::io_error, "cannot read '" + path("nope") + "'",
                     "No such file or directory");
}

}  // namespace
