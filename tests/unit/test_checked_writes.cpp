// The one checked writer and the regular-file reader (base/files.hpp), and the memory budget
// (base/memory_budget.hpp): a write that fails (a full file system, a directory in the file's place, a file
// size limit, a read-only directory) throws naming the path and the OS error, leaves no temporary file, no
// empty file, and the old file intact; a FIFO or a directory is refused without blocking.
#include "base/files.hpp"
#include "base/memory_budget.hpp"

#include <corun/error.hpp>

#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

class CheckedWrites : public corun::testing::TempDirTest {
 protected:
  CheckedWrites() : TempDirTest("writes") {}

  // The message of the corun::Error `f` throws ("" when it throws nothing).
  template <class F>
  static std::string error_of(F&& f) {
    try {
      f();
    } catch (const corun::Error& e) {
      return e.what();
    }
    return "";
  }
  // Nothing but `keep` in `dir`: no temporary file was left behind.
  static void expect_only(const std::string& dir, const std::string& keep) {
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string(), keep) << "left behind: " << e.path();
  }
  static void write_text(const std::string& p, const std::string& text) { std::ofstream(p) << text; }
};

TEST_F(CheckedWrites, WritesAndReplacesWholeFiles) {
  corun::write_file_atomically(path("a.json"), "first\n");
  corun::write_file_atomically(path("a.json"), {"sec", "ond\n"}, "the results");
  EXPECT_EQ(corun::read_file(path("a.json")), "second\n");
  expect_only(dir_, "a.json");
}

TEST_F(CheckedWrites, DirectoryInTheFilesPlaceIsRefusedBeforeWriting) {
  fs::create_directory(path("out.json"));
  const std::string msg = error_of([&] { corun::write_file_atomically(path("out.json"), "x", "the --json results"); });
  EXPECT_NE(msg.find("the --json results '" + path("out.json") + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Is a directory"), std::string::npos) << msg;
  EXPECT_TRUE(fs::is_directory(path("out.json")));
  expect_only(dir_, "out.json");
}

TEST_F(CheckedWrites, MissingDirectoryNamesThePath) {
  const std::string msg = error_of([&] { corun::write_file_atomically(path("no/such/out.json"), "x"); });
  EXPECT_NE(msg.find("no/such/out.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file or directory"), std::string::npos) << msg;
}

// A file size limit makes write() fail with EFBIG part way, as a full disk fails with ENOSPC: in a child,
// so the limit does not stay on the test process.
TEST_F(CheckedWrites, FailedWriteLeavesTheOldFileAndNoTemporary) {
  write_text(path("out.json"), "old contents\n");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the writer instead of failing the write
    struct rlimit lim {
      4096, 4096
    };
    setrlimit(RLIMIT_FSIZE, &lim);
    const std::string msg = error_of([&] { corun::write_file_atomically(path("out.json"), std::string(100000, 'x')); });
    const bool ok = msg.find("'" + path("out.json") + "' (write): File too large") != std::string::npos;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the error did not name the path and EFBIG";
  EXPECT_EQ(corun::read_file(path("out.json")), "old contents\n");
  expect_only(dir_, "out.json");
}

// A full file system and a read-only one: a small tmpfs, which only root can mount.
class MountedTmpfs : public CheckedWrites {
 protected:
  void SetUp() override {
    CheckedWrites::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
    fs::create_directory(path("fs"));
    if (mount("tmpfs", path("fs").c_str(), "tmpfs", 0, "size=64k") != 0)
      GTEST_SKIP() << "cannot mount a tmpfs here (no CAP_SYS_ADMIN in this container): " << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(path("fs").c_str(), MNT_DETACH);
    CheckedWrites::TearDown();
  }
  bool mounted_ = false;
};

TEST_F(MountedTmpfs, FullFileSystem) {
  const std::string out = path("fs/out.json");
  write_text(out, "old contents\n");
  const std::string msg =
      error_of([&] { corun::write_file_atomically(out, std::string(256 * 1024, 'x'), "the results"); });
  EXPECT_NE(msg.find("the results '" + out + "' (write): No space left on device"), std::string::npos) << msg;
  EXPECT_EQ(corun::read_file(out), "old contents\n");
  expect_only(path("fs"), "out.json");
}

TEST_F(MountedTmpfs, ReadOnlyDirectory) {
  const std::string out = path("fs/out.json");
  write_text(out, "old contents\n");
  ASSERT_EQ(mount(nullptr, path("fs").c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0) << std::strerror(errno);
  const std::string msg = error_of([&] { corun::write_file_atomically(out, "new"); });
  EXPECT_NE(msg.find("'" + out + "' (creating a temporary file beside it): Read-only file system"), std::string::npos)
      << msg;
  EXPECT_EQ(corun::read_file(out), "old contents\n");
  expect_only(path("fs"), "out.json");
}

TEST_F(CheckedWrites, ReadsRefuseFifosAndDirectoriesWithoutBlocking) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_directory(path("dir"));
  alarm(20);  // a read that blocks fails the test instead of hanging it
  const std::string fifo = error_of([&] { corun::read_file(path("fifo")); });
  const std::string dir = error_of([&] { corun::read_file(path("dir")); });
  alarm(0);
  EXPECT_NE(fifo.find("'" + path("fifo") + "' is a FIFO, not a regular file"), std::string::npos) << fifo;
  EXPECT_NE(dir.find("'" + path("dir") + "' is a directory, not a regular file"), std::string::npos) << dir;
  EXPECT_NE(error_of([&] { corun::read_file(path("none")); }).find("No such file"), std::string::npos);
}

TEST_F(CheckedWrites, MemoryBudgetTakesTheSmallestLimit) {
  // A fake tree: MemAvailable 8 GiB; a cgroup v2 limit of 3 GiB with 1 GiB used leaves 2 GiB.
  fs::create_directories(path("proc/self"));
  fs::create_directories(path("sys/fs/cgroup/job"));
  write_text(path("proc/meminfo"), "MemTotal:       16777216 kB\nMemAvailable:    8388608 kB\n");
  write_text(path("proc/self/cgroup"), "0::/job\n");
  write_text(path("proc/self/mountinfo"), "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
  write_text(path("sys/fs/cgroup/job/memory.max"), "3221225472\n");
  write_text(path("sys/fs/cgroup/job/memory.current"), "1073741824\n");
  corun::MemoryBudget m = corun::memory_budget(dir_);
  EXPECT_EQ(m.bytes, 2.0 * (1u << 30));
  EXPECT_NE(m.source.find("/sys/fs/cgroup/job/memory.max"), std::string::npos) << m.source;
  write_text(path("sys/fs/cgroup/job/memory.max"), "max\n");  // no limit: MemAvailable
  m = corun::memory_budget(dir_);
  EXPECT_EQ(m.bytes, 8.0 * (1u << 30));
  EXPECT_EQ(m.source, "MemAvailable in /proc/meminfo");
  EXPECT_EQ(corun::human_bytes(1.5 * (1u << 30)), "1.5 GiB");
  EXPECT_EQ(corun::human_bytes(100), "100 bytes");
}

}  // namespace
