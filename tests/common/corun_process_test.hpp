// tests/common/corun_process_test.hpp — the fixture of the tests that run the corun executable: a fresh
// directory per test (TempDirTest), every corun started there with the test's own StarPU home
// (private_starpu_home() of cli_run.hpp: tests running side by side under ctest -j never share ~/.starpu) and
// from the same scrubbed environment, and the processes a test starts in the background killed at its end when
// a failed assertion left them running or stopped.
#pragma once

#include "common/cli_run.hpp"
#include "common/temp_dir_test.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#ifndef CORUN_EXE
#error "CORUN_EXE must be defined to the path of the corun executable"
#endif

namespace corun::testing {

/// The start of a test's corun command lines: `env` with no policy inherited from the shell or from
/// scripts/test.sh (CORUN_SCHED, STARPU_SCHED), the test's own `unset` variables removed too (those its
/// expectations depend on), then `set` (VAR=value ...; by default no progress chatter).
inline std::string corun_test_env(const std::vector<std::string>& unset = {}, const std::string& set = "CORUN_QUIET=1") {
  std::string r = "env -u CORUN_SCHED -u STARPU_SCHED ";
  for (const std::string& v : unset) r += "-u " + v + " ";
  return set.empty() ? r : r + set + " ";
}

/// What a test's corun starts from unless its fixture says otherwise.
inline const std::string kCorunTestEnv = corun_test_env();

class CorunProcessTest : public TempDirTest {
 protected:
  /// `prefix` names the test's directory (/tmp/corun_<prefix>_XXXXXX); `env` starts every corun command line
  /// ("env -u VAR ... VAR=value "), before the test's own variables.
  explicit CorunProcessTest(std::string prefix, std::string env = kCorunTestEnv)
      : TempDirTest(std::move(prefix)), env_(std::move(env)) {}

  void TearDown() override {
    for (pid_t p : children_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    children_.clear();
    TempDirTest::TearDown();
  }

  /// The command line of `corun ARGS`: `shell` (shell statements: "ulimit -v N && "), the fixture's
  /// environment, the test's `env` (VAR=value ...), then `wrapper` (a program running corun: taskset, timeout,
  /// mpirun ...).
  std::string corun_command(const std::string& args, const std::string& env = "", const std::string& wrapper = "",
                            const std::string& shell = "") const {
    return shell + env_ + env + " " + wrapper + " " + shell_quote(CORUN_EXE) + " " + args;
  }

  /// The fixture's environment ("env -u VAR ... VAR=value "), for command lines that run corun under another
  /// program given a single command word (script -c) or beside another corun.
  const std::string& corun_env() const { return env_; }

  /// Runs `corun ARGS` in the test's directory and waits for it (see corun_command()).
  CommandResult corun(const std::string& args, const std::string& env = "", const std::string& wrapper = "",
                      const std::string& shell = "") const {
    return run_command(dir_, corun_command(args, env, wrapper, shell));
  }

  /// Starts `corun ARGS` in the background in `dir` (default: the test's directory), with its own StarPU home
  /// there; stdout and stderr go to NAME.out and NAME.err in `dir`. The pid is corun's own (the shell execs it).
  pid_t spawn(const std::string& args, const std::string& env, const std::string& name,
              const std::string& wrapper = "", std::string dir = "") {
    if (dir.empty()) dir = dir_;
    return spawn_shell("cd " + shell_quote(dir) + " && " + private_starpu_home(dir) + "exec " +
                       corun_command(args, env, wrapper) + " >" + name + ".out 2>" + name + ".err </dev/null");
  }

  /// Starts `sh -c CMD` in the background; killed at the end of the test unless wait_exit() reaped it.
  pid_t spawn_shell(const std::string& cmd) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid > 0) children_.push_back(pid);
    return pid;
  }

  /// Waits for `pid` to end: its exit code, 128 + the signal when a signal ended it, -1 after `timeout_s`
  /// (it is killed then).
  int wait_exit(pid_t pid, int timeout_s = 120) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    bool timed_out = false;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reaped(pid);
    if (timed_out) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  /// A child the test reaped itself (waitpid): not to be killed at the end (its pid may be reused).
  void reaped(pid_t pid) { children_.erase(std::remove(children_.begin(), children_.end(), pid), children_.end()); }

 private:
  std::string env_;
  std::vector<pid_t> children_;
};

}  // namespace corun::testing
