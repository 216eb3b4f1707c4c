// The corun executable end to end, part 4: errors where the eye is (issue 22 item 1, issue 21 items 1 and 6).
// A usage error shows the flag's own line, a pointer to --help and the reason as the last line; a bad
// setting (policy, CORUN_*, StarPU's own variables) or an unwritable output path fails in milliseconds,
// before any model is built or StarPU started, never after the iterations ran.
#include "cli_fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using corun::testing::Cli;
using corun::testing::contains;
using corun::testing::kTiny;
using corun::testing::Result;
using corun::testing::shell_quote;

// The last non-empty line of `text`.
std::string last_line(const std::string& text) {
  std::string last;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) last = text.substr(start, end - start);
    start = end + 1;
  }
  return last;
}

size_t lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// A training run that would take minutes if it got as far as iterating: an early check that slipped to the
// end shows as a timeout, not as a pass.
const std::string kLong = "--model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1000000";

class EarlyErrors : public Cli {
 protected:
  // Runs corun and returns the result with the wall time in `seconds`.
  Result timed(const std::string& args, const std::string& env, double* seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    Result r = corun(args, "STARPU_HOME=" + shell_quote(dir_) + " " + env);
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
};

TEST_F(EarlyErrors, UsageErrorShowsTheFlagLineAndEndsWithTheReason) {
  struct Case {
    const char* args;
    const char* command;
    const char* flag_line;  // the relevant flag's usage line, or the synopsis when there is no flag
    const char* reason;
  };
  for (const Case& c : {Case{"train --model lstm --iters x", "train", "  --iters V", "--iters needs a positive integer"},
                        Case{"train --model lstm --lr", "train", "  --lr V", "--lr needs a value"},
                        Case{"train --model resnet", "train", "  --model V", "unknown model 'resnet'"},
                        Case{"train --model lstm --bogus", "train", "usage: corun train", "unknown argument '--bogus'"},
                        Case{"infer --model wide-deep --exec fast", "infer", "  --exec V", "--exec must be starpu"},
                        Case{"plot-trace t.json -o x.gif", "plot-trace", "  -o V", "-o must name a .png or .svg"},
                        Case{"serve-bench --cell rnn", "serve-bench", "  --cell V", "--cell must be lstm or gru"},
                        Case{"info --bogus", "info", "usage: corun info", "unknown argument '--bogus'"}}) {
    SCOPED_TRACE(c.args);
    const Result r = corun(c.args);
    EXPECT_EQ(r.code, 2) << r;
    const std::string last = last_line(r.err);
    EXPECT_EQ(last.rfind(std::string("corun ") + c.command + ": ", 0), 0u) << r;
    EXPECT_TRUE(contains(last, c.reason)) << "the reason is not the last line\n" << r;
    EXPECT_HAS(r.err, std::string("see `corun ") + c.command + " --help`");
    EXPECT_EQ(r.err.rfind(c.flag_line, 0), 0u) << "the first line is not the flag's own line\n" << r;
    EXPECT_EQ(lines(r.err), 3u) << "the whole usage block is for --help, not for an error\n" << r;
  }
  const Result none = corun("");  // no command: the command list is the relevant usage, the reason last
  EXPECT_EQ(none.code, 2) << none;
  EXPECT_EQ(last_line(none.err), "corun: no command given") << none;
  const Result unknown = corun("frobnicate");
  EXPECT_EQ(last_line(unknown.err), "corun: unknown command 'frobnicate'") << unknown;
}

TEST_F(EarlyErrors, BadPolicyFailsBeforeTheModelIsBuilt) {
  // GoogLeNet takes seconds to build: a policy checked after the build would be far above the bound.
  double s = 0;
  const Result r = timed("train --model googlenet", "CORUN_SCHED=nosuch", &s);
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_LT(s, 1.0) << r;
  EXPECT_TRUE(contains(last_line(r.err), "CORUN_SCHED='nosuch' is not a scheduling policy")) << r;
  EXPECT_FALSE(contains(r.err, "parallel-op pass")) << "the model was built first\n" << r;
  const Result usage = timed("train --model googlenet --iters x", "", &s);  // a flag the model's default needs
  EXPECT_EQ(usage.code, 2) << usage;
  EXPECT_LT(s, 1.0) << usage;
  for (const char* env : {"STARPU_SCHED=nosuch", "CORUN_SCHED=lws CORUN_EXECUTORS=2x1",
                          "CORUN_SCHED=cpf CORUN_DETERMINISTIC=1", "CORUN_SCHED=cpf CORUN_PROFILE=none.profile"}) {
    SCOPED_TRACE(env);
    const Result e = timed("train --model googlenet", env, &s);
    EXPECT_EQ(e.code, 1) << e;
    EXPECT_LT(s, 1.0) << e;
    EXPECT_FALSE(contains(e.err, "parallel-op pass")) << e;
  }
}

TEST_F(EarlyErrors, StarpuVariablesAreCheckedByCorun) {
  struct Case {
    const char* env;
    const char* says;
  };
  for (const Case& c : {Case{"STARPU_NCPU=-1", "STARPU_NCPU='-1'"}, Case{"STARPU_NCPU=abc", "STARPU_NCPU='abc'"},
                        Case{"STARPU_NCPU=0", "STARPU_NCPU='0'"}, Case{"STARPU_NCPU=2x", "STARPU_NCPU='2x'"},
                        Case{"STARPU_WORKERS_CPUID='0 x'", "STARPU_WORKERS_CPUID='0 x' is not a CPU list"},
                        Case{"STARPU_WORKERS_CPUID=3-1", "the range 3-1 is empty"},
                        Case{"STARPU_WORKERS_COREID=-1", "STARPU_WORKERS_COREID"},
                        Case{"STARPU_MAIN_THREAD_BIND=yes", "STARPU_MAIN_THREAD_BIND='yes'"},
                        Case{"STARPU_CALIBRATE=3", "STARPU_CALIBRATE='3'"}}) {
    SCOPED_TRACE(c.env);
    double s = 0;
    const Result r = timed("train " + kTiny, c.env, &s);
    EXPECT_EQ(r.code, 1) << r;
    EXPECT_TRUE(contains(last_line(r.err), c.says)) << r;
    EXPECT_FALSE(contains(r.err, "parallel-op pass")) << r;
    for (const char* crash : {"Assertion", "abort", "Abort", "backtrace"}) EXPECT_FALSE(contains(r.err, crash)) << r;
    EXPECT_LT(s, 1.0) << r;
    const Result info = corun("info", c.env);  // corun info reports the same, before its report
    EXPECT_EQ(info.code, 1) << info;
    EXPECT_TRUE(contains(last_line(info.err), c.says)) << info;
  }
  const Result ok = corun("train " + kTiny, "CORUN_QUIET=1 STARPU_NCPU=1 STARPU_WORKERS_CPUID='0 1-'");
  EXPECT_EQ(ok.code, 0) << "valid values pass\n" << ok;
}

// Issue 52 item 6: StarPU 1.3 asserts on an empty STARPU_WORKERS_CPUID or _COREID and fails starpu_init on an
// empty STARPU_NCPU; docs/env-vars.md says an empty variable counts as unset, so the run must go on as without it.
TEST_F(EarlyErrors, EmptyStarpuVariablesCountAsUnset) {
  for (const char* env : {"STARPU_WORKERS_CPUID=", "STARPU_WORKERS_COREID=", "STARPU_NCPU=", "STARPU_RESERVE_NCPU=",
                          "XDG_CACHE_HOME="}) {
    SCOPED_TRACE(env);
    const Result r = corun("train " + kTiny, std::string("CORUN_QUIET=1 ") + env);
    EXPECT_EQ(r.code, 0) << r;
    for (const char* crash : {"Assertion", "abort", "Abort", "backtrace", "starpu_init failed"})
      EXPECT_FALSE(contains(r.err, crash)) << r;
  }
}

// Issue 52 item 6: an id the machine lacks is refused naming the variable and the id (StarPU wraps it and binds
// every worker to one CPU), and STARPU_RESERVE_NCPU that leaves no core is named itself, not STARPU_NCPU.
TEST_F(EarlyErrors, StarpuBindingTheMachineLacksIsRefused) {
  struct Case {
    const char* env;
    std::vector<const char*> says;
  };
  for (const Case& c : {Case{"STARPU_WORKERS_CPUID=99999", {"STARPU_WORKERS_CPUID='99999'", "CPU 99999"}},
                        Case{"STARPU_WORKERS_CPUID='0 99999-'", {"STARPU_WORKERS_CPUID", "CPU 99999"}},
                        Case{"STARPU_WORKERS_COREID=99999", {"STARPU_WORKERS_COREID='99999'", "core 99999"}},
                        Case{"STARPU_RESERVE_NCPU=65536", {"STARPU_RESERVE_NCPU=65536", "below"}}}) {
    SCOPED_TRACE(c.env);
    double s = 0;
    const Result r = timed("train " + kTiny, c.env, &s);
    EXPECT_EQ(r.code, 1) << r;
    for (const char* part : c.says) EXPECT_TRUE(contains(last_line(r.err), part)) << part << "\n" << r;
    EXPECT_FALSE(contains(r.err, "STARPU_NCPU")) << r;
    EXPECT_FALSE(contains(r.err, "parallel-op pass")) << "the model was built first\n" << r;
    EXPECT_LT(s, 2.0) << r;
  }
}

TEST_F(EarlyErrors, OutputPathsAreCheckedBeforeTheFirstIteration) {
  fs::create_directories(path("adir"));
  { std::ofstream(path("afile")) << "x"; }
  { std::ofstream(path("kept.json")) << "the user's"; }
  fs::permissions(path("kept.json"), fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  struct Case {
    std::string args;
    const char* says;
  };
  for (const Case& c : {Case{"--json adir", "--json 'adir' is a directory"},
                        Case{"--json no/such/r.json", "directory 'no/such' does not exist"},
                        Case{"--trace no/t.json", "--trace 'no/t.json'"},
                        Case{"--json afile/r.json", "'afile' is not a directory"},
                        Case{"--save afile/sub", "--save 'afile/sub'"},
                        Case{"--save afile", "--save 'afile' exists and is not a directory"},
                        Case{"--dump-grads afile/g", "--dump-grads 'afile/g'"},
                        Case{"--checkpoint afile", "--checkpoint 'afile'"},
                        Case{"--json kept.json", "--json 'kept.json' is a read-only file"}}) {
    SCOPED_TRACE(c.args);
    double s = 0;
    const Result r = timed("train " + kLong + " " + c.args, "", &s);
    EXPECT_EQ(r.code, 1) << r;
    EXPECT_TRUE(contains(last_line(r.err), c.says)) << r;
    EXPECT_FALSE(contains(r.err, "parallel-op pass")) << "the model was built first\n" << r;
    EXPECT_LT(s, 1.0) << r;
  }
  std::ifstream kept(path("kept.json"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "the user's");
  // --save-onnx writes back the --onnx model's file: a built-in model has none (a usage error).
  double s = 0;
  const Result no_onnx = timed("train " + kLong + " --save-onnx m.onnx", "", &s);
  EXPECT_EQ(no_onnx.code, 2) << no_onnx;
  EXPECT_TRUE(contains(last_line(no_onnx.err), "--save-onnx needs --onnx")) << no_onnx;
  EXPECT_LT(s, 1.0) << no_onnx;
  // A directory to be made (with parents) under a writable one is fine: the check does not create it.
  const Result ok = corun("train " + kTiny + " --save new/params --json r.json", "CORUN_QUIET=1");
  EXPECT_EQ(ok.code, 0) << ok;
  EXPECT_TRUE(fs::exists(path("new/params")));
  // plot-trace and profile check their output before reading the trace or calibrating anything.
  const Result plot = corun("plot-trace missing.json -o no/x.png");
  EXPECT_EQ(plot.code, 1) << plot;
  EXPECT_TRUE(contains(last_line(plot.err), "-o 'no/x.png'")) << plot;
  const Result prof = timed("profile --model lstm -o no/p.txt", "", &s);
  EXPECT_EQ(prof.code, 1) << prof;
  EXPECT_TRUE(contains(last_line(prof.err), "-o 'no/p.txt'")) << prof;
  EXPECT_LT(s, 1.0) << prof;
}

}  // namespace
