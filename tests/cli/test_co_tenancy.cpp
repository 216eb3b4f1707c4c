// Co-tenancy (issue 21 item 7): a `corun train` whose cores another StarPU process also runs on finishes and
// says so in one warning line naming that process (cli/co_tenancy.hpp).
#include "common/cli_run.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#ifndef CORUN_EXE
#error "CORUN_EXE must be defined to the path of the corun executable"
#endif

namespace {

namespace fs = std::filesystem;
using corun::testing::contains;
using corun::testing::read_file;
using corun::testing::shell_quote;

class CoTenancy : public corun::testing::TempDirTest {
 protected:
  CoTenancy() : TempDirTest("cotenancy") {}
  void TearDown() override {
    if (bg_ > 0) {
      kill(bg_, SIGKILL);
      waitpid(bg_, nullptr, 0);
    }
    TempDirTest::TearDown();
  }
  pid_t bg_ = -1;
};

TEST_F(CoTenancy, TrainWarnsWhenAnotherStarpuProcessSharesItsCores) {
  // A long training run on every CPU of the allocation, in its own directory and StarPU home.
  fs::create_directories(path("bg"));
  const std::string cmd = "cd " + shell_quote(path("bg")) + " && " + corun::testing::private_starpu_home(path("bg")) +
                          "exec env -u CORUN_SCHED -u STARPU_SCHED CORUN_QUIET=1 " + shell_quote(CORUN_EXE) +
                          " train --model lstm --size medium --iters 100000000 >bg.out 2>bg.err </dev/null";
  bg_ = fork();
  if (bg_ == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(bg_, 0);
  bool running = false;  // until its StarPU workers exist (threads named "CPU <n>")
  for (int i = 0; i < 600 && !running; ++i) {
    std::error_code ec;
    for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(bg_) + "/task", ec))
      running = running || contains(read_file(t.path().string() + "/comm"), "CPU ");
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(running) << "the background corun never started its workers:\n" << read_file(path("bg/bg.err"));

  const corun::testing::CommandResult r =
      corun::testing::run_command(dir_, "env -u CORUN_SCHED -u STARPU_SCHED -u CORUN_QUIET " + shell_quote(CORUN_EXE) +
                                            " train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 3");
  ASSERT_EQ(r.code, 0) << r;  // it finishes
  EXPECT_TRUE(contains(r.err, "corun train: warning: the cores are shared: another ")) << r;
  // The co-tenant is named, or counted with the others on a shared machine (`corun info` lists them all).
  EXPECT_TRUE(contains(r.err, "pid " + std::to_string(bg_) + " (corun") || contains(r.err, " more (corun info)")) << r;
  // One line, however many iterations.
  const auto first = r.err.find("warning: the cores are shared");
  EXPECT_EQ(r.err.find("warning: the cores are shared", first + 1), std::string::npos) << r;
}

}  // namespace
