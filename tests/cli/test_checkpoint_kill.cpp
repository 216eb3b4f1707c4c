// Deterministic signal and kill -9 tests of `corun train --checkpoint` (issue 21 item 9): instead of sleeping
// and hoping that a kill lands inside a checkpoint write, the run stops itself there (the test-only hook
// CORUN_TEST_PAUSE_IN_CHECKPOINT, docs/env-vars.md), the test sees it stopped (waitpid WUNTRACED) and kills
// it at exactly that point; signals are sent to a stopped process and delivered together on SIGCONT.
// After every kill, the newest checkpoint must load and resume to the losses of an uninterrupted run.
#include "common/corun_process_test.hpp"
#include "common/run_results.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;
using corun::testing::contains;
using corun::testing::losses_of;
using corun::testing::newest_checkpoint;
using corun::testing::read_file;
using Result = corun::testing::CommandResult;

const std::string kTiny = "--model lstm --layers 1 --seq 3 --hidden 8 --batch 4";

// Whether `dir` holds an entry whose name starts with `prefix`.
bool has_entry(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

// Every corun here also unsets CORUN_TEST_PAUSE_IN_CHECKPOINT: only the runs that set it pause.
class CheckpointKill : public corun::testing::CorunProcessTest {
 protected:
  CheckpointKill()
      : CorunProcessTest("ckptkill", corun::testing::corun_test_env({"CORUN_TEST_PAUSE_IN_CHECKPOINT"})) {}

  // Starts corun in the background (stdout/stderr to run.out / run.err) with `env` added.
  void spawn(const std::string& args, const std::string& env) { pid_ = CorunProcessTest::spawn(args, env, "run"); }

  // Waits until the child stops (SIGSTOP); false when it exits first or after `timeout_s`.
  bool wait_stopped(int timeout_s = 120) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WUNTRACED | WNOHANG);
      if (r == pid_ && WIFSTOPPED(status)) return true;
      if (r == pid_) {  // it ended instead
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        reaped(pid_);
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // Exit code of the child (128 + signal when killed; -1 when it ran 120 s more and was killed).
  int wait_exit() {
    const int code = CorunProcessTest::wait_exit(pid_);
    pid_ = -1;
    return code;
  }

  // The losses of an uninterrupted run of `iters` iterations.
  std::string reference(long iters) {
    const Result r = corun("train " + kTiny + " --iters " + std::to_string(iters) + " --json ref.json");
    EXPECT_EQ(r.code, 0) << r;
    return losses_of(read_file(path("ref.json")));
  }

  pid_t pid_ = -1;
  int exit_code_ = -1;  ///< of a child that ended during wait_stopped()
};

// kill -9 at each point of a checkpoint write: what the kill leaves is cleaned up, and the newest complete
// checkpoint resumes to bitwise the losses of an uninterrupted run.
class KillInsideWrite : public CheckpointKill, public ::testing::WithParamInterface<const char*> {};

TEST_P(KillInsideWrite, LeavesTheNewestCheckpointResumable) {
  const std::string point = GetParam();
  spawn("train " + kTiny + " --iters 100000000 --checkpoint ck --checkpoint-every 1",
        "CORUN_TEST_PAUSE_IN_CHECKPOINT=" + point);
  ASSERT_TRUE(wait_stopped()) << "corun never paused at '" << point << "':\n" << read_file(path("run.err"));
  // Stopped inside the write: the temporary checkpoint (files, manifest) or the old one set aside (prune).
  EXPECT_TRUE(has_entry(path("ck"), point == std::string("prune") ? ".trash-" : ".tmp-")) << point;
  ASSERT_EQ(kill(pid_, SIGKILL), 0);
  ASSERT_EQ(wait_exit(), 128 + SIGKILL);

  const long k = newest_checkpoint(path("ck"));
  // The pause of files/manifest comes in the first write (no checkpoint yet), prune's in the third.
  ASSERT_EQ(k, point == std::string("prune") ? 3 : -1) << point;
  const long total = std::max(k, 0L) + 2;
  const Result r = corun("train " + kTiny + " --iters " + std::to_string(total) +
                       " --checkpoint ck --checkpoint-every 1 --resume --json resumed.json");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(has_entry(path("ck"), ".tmp-")) << "leftovers of the killed write were not cleared";
  EXPECT_FALSE(has_entry(path("ck"), ".trash-")) << "leftovers of the killed removal were not cleared";
  if (k > 0) {
    EXPECT_TRUE(contains(r.err, "resuming from ck/ckpt-")) << r;
  }
  EXPECT_EQ(losses_of(read_file(path("resumed.json"))), reference(total));
}

INSTANTIATE_TEST_SUITE_P(Each, KillInsideWrite, ::testing::Values("files", "manifest", "prune"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// A signal sent while the run is stopped inside a checkpoint write is handled when it continues: the
// write completes, the run stops after its iteration with exit 3, and two signals (delivered together)
// exit at once.
TEST_F(CheckpointKill, SignalsDeliveredInsideAWrite) {
  spawn("train " + kTiny + " --iters 100000000 --checkpoint ck --checkpoint-every 1 --json stopped.json",
        "CORUN_TEST_PAUSE_IN_CHECKPOINT=manifest");
  ASSERT_TRUE(wait_stopped()) << read_file(path("run.err"));
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  // Each further checkpoint write pauses again; continue it until the run ends.
  for (int i = 0; i < 100 && pid_ > 0; ++i) {
    ASSERT_EQ(kill(pid_, SIGCONT), 0);
    if (!wait_stopped()) break;
  }
  ASSERT_EQ(pid_, -1) << "the run did not stop after SIGTERM";
  const std::string err = read_file(path("run.err"));
  EXPECT_EQ(exit_code_, 3) << err;
  EXPECT_TRUE(contains(err, "corun: stopped by SIGTERM after iteration 1")) << err;
  EXPECT_TRUE(contains(read_file(path("stopped.json")), "\"stopped_by\":\"SIGTERM\""));
  EXPECT_EQ(newest_checkpoint(path("ck")), 1);

  // Two signals while stopped: both pending, delivered together on SIGCONT: the second exits at once.
  spawn("train " + kTiny + " --iters 100000000 --checkpoint ck2 --checkpoint-every 1",
        "CORUN_TEST_PAUSE_IN_CHECKPOINT=files");
  ASSERT_TRUE(wait_stopped()) << read_file(path("run.err"));
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  ASSERT_EQ(kill(pid_, SIGUSR1), 0);  // another number: two pending signals never merge into one
  ASSERT_EQ(kill(pid_, SIGCONT), 0);
  const int code = wait_exit();
  const std::string err2 = read_file(path("run.err"));
  EXPECT_TRUE(code == 128 + SIGTERM || code == 128 + SIGUSR1) << code << "\n" << err2;
  EXPECT_TRUE(contains(err2, "corun: second signal: exiting at once")) << err2;
}

// A signal always ends the run within a bounded time, even when a task never returns (issue 21 item 1):
// the run gets stuck inside a checkpoint write (CORUN_TEST_PAUSE_IN_CHECKPOINT=stuck stops there, then never
// returns once continued), SIGTERM asks it to stop, and the grace period's alarm (2 s here instead of at
// least 60 s: CORUN_TEST_GRACE_SECONDS) ends it with 128 + SIGTERM and its message.
TEST_F(CheckpointKill, TheGracePeriodEndsARunStuckAfterASignal) {
  spawn("train " + kTiny + " --iters 100000000 --checkpoint ck --checkpoint-every 1",
        "CORUN_TEST_PAUSE_IN_CHECKPOINT=stuck CORUN_TEST_GRACE_SECONDS=2");
  ASSERT_TRUE(wait_stopped()) << read_file(path("run.err"));
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid_, SIGCONT), 0);
  // Never stuck forever: SIGKILL after 60 s would show as exit 137 below, and fail the test.
  std::thread guard([pid = pid_] {
    for (int i = 0; i < 600; ++i) {
      if (kill(pid, 0) != 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid, SIGKILL);
  });
  const int code = wait_exit();
  guard.join();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  const std::string err = read_file(path("run.err"));
  EXPECT_EQ(code, 128 + SIGTERM) << err;
  EXPECT_TRUE(contains(err, "did not stop within its grace period after the signal")) << err;
  EXPECT_GE(waited, 1.5) << "the alarm came before the grace period";
  EXPECT_LT(waited, 30.0) << "the grace period of 2 s did not end the stuck run";
}

}  // namespace
