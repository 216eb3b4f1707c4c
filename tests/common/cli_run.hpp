// tests/common/cli_run.hpp — runs a command through the shell and captures its exit code, stdout and
// stderr, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>

namespace corun::testing {

inline std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

struct CommandResult {
  int code = -1;  ///< exit status, or -1 if the process did not exit normally
  std::string out, err;
  std::string cmd;
};

inline std::ostream& operator<<(std::ostream& os, const CommandResult& r) {
  return os << "command: " << r.cmd << "\nexit: " << r.code << "\n--- stdout ---\n"
            << r.out << "--- stderr ---\n"
            << r.err;
}

/// The environment every spawned corun starts from: its own StarPU home, `dir`/.starpu-home, so that tests
/// running in parallel under ctest -j never share ~/.starpu (StarPU asserted in CI when a run with a
/// narrower CPU mask rewrote the shared bus files). XDG_CACHE_HOME is unset because StarPU prefers it to
/// STARPU_HOME. A test that wants another home (one it calibrated on purpose) sets STARPU_HOME in its own
/// command, which comes later and wins.
inline std::string private_starpu_home(const std::string& dir) {
  return "export STARPU_HOME=" + shell_quote(dir + "/.starpu-home") + " && unset XDG_CACHE_HOME && ";
}

/// Runs `cmd` (a shell command line) in `dir`, with stdin from /dev/null and the StarPU home of
/// private_starpu_home(); stdout and stderr go through files in `dir` (stdout.txt, stderr.txt).
inline CommandResult run_command(const std::string& dir, const std::string& cmd) {
  CommandResult r;
  r.cmd = "cd " + shell_quote(dir) + " && " + private_starpu_home(dir) + cmd;
  const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
  const std::string full = r.cmd + " >" + shell_quote(out) + " 2>" + shell_quote(err) + " </dev/null";
  const int status = std::system(full.c_str());
  if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.out = read_file(out);
  r.err = read_file(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace corun::testing

/// EXPECT that `text` contains `part`, printing the text when it does not.
#define EXPECT_HAS(text, part)                                               \
  EXPECT_TRUE(::corun::testing::contains((text), (part))) << "'" << (part) \
                                                           << "' not found in:\n" << (text)
