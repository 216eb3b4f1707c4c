// The corun executable end to end, part 5: one line per concern (issue 22 item 3). StarPU's calibration
// chatter becomes one corun line, the lower bound is printed only when it means something and names what it
// is compared with (the trace's makespan, or the wall time), and a run beside another StarPU/corun process
// says once that the cores are shared.
#include "base/json.hpp"
#include "cli_fixture.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using corun::testing::Cli;
using corun::testing::contains;
using corun::testing::Result;
using corun::testing::shell_quote;
namespace json = corun::json;

const std::string kTiny = "--model lstm --layers 1 --seq 3 --hidden 8 --batch 4";  // --iters per test

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The line of `text` that starts with `prefix` ("" when none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  const size_t at = text.rfind("\n" + prefix) != std::string::npos ? text.rfind("\n" + prefix) + 1
                    : text.rfind(prefix, 0) == 0                    ? 0
                                                                    : std::string::npos;
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

TEST_F(Cli, FreshModelsAreOneCalibrationLine) {
  // A fresh STARPU_HOME: the bus and every op model are calibrated. StarPU's own paragraphs are silenced.
  const std::string home = "STARPU_HOME=" + shell_quote(path("fresh")) + " CORUN_SCHED=cpf";
  const Result r = corun("train " + kTiny + " --iters 2", home);
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(count(r.err, "corun train: calibrating: "), 1u) << r;
  EXPECT_HAS(r.err, "the first iterations are slower");
  EXPECT_EQ(count(r.err, "[starpu]"), 0u) << "StarPU's calibration messages are not folded\n" << r;
  // STARPU_SILENT=0 brings StarPU's messages back (what was silenced was StarPU's, not an error).
  const Result loud = corun("train " + kTiny + " --iters 2",
                          "STARPU_HOME=" + shell_quote(path("fresh2")) + " CORUN_SCHED=cpf STARPU_SILENT=0");
  ASSERT_EQ(loud.code, 0) << loud;
  EXPECT_HAS(loud.err, "[starpu]");
}

TEST_F(Cli, LowerBoundNamesWhatItIsComparedWith) {
  const std::string env = "STARPU_HOME=" + shell_quote(path("home")) + " CORUN_SCHED=cpf CORUN_QUIET=1";
  // Enough iterations for every op's model (10 samples each), then a traced run on the same models.
  ASSERT_EQ(corun("train " + kTiny + " --iters 25", env).code, 0);
  const Result r = corun("train " + kTiny + " --iters 3 --trace t.json", env);
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(contains(r.out, "lower bound: n/a")) << r;
  const std::string bound = line_starting(r.out, "last iteration: ");
  const std::string why = line_starting(r.out, "lower bound: not ");
  ASSERT_NE(bound.empty(), why.empty()) << "one line: the bound or why it is not shown\n" << r;
  if (!bound.empty()) {  // the trace's makespan, to the printed precision
    ASSERT_EQ(bound.rfind("last iteration: makespan ", 0), 0u) << r;
    EXPECT_HAS(bound, "first task start to last task end");
    const double printed = std::atof(bound.c_str() + std::string("last iteration: makespan ").size());
    const json::Value trace = json::parse_file(path("t.json"));
    const double traced = trace.at("otherData").at("makespan_us").get<double>() / 1000.0;
    EXPECT_NEAR(printed, traced, 0.006) << r;
  } else {
    EXPECT_HAS(why, "StarPU history models for machine");
  }
  const Result untraced = corun("train " + kTiny + " --iters 3", env);  // no task times: the wall time, named so
  ASSERT_EQ(untraced.code, 0) << untraced;
  const std::string wall = line_starting(untraced.out, "last iteration: ");
  if (!wall.empty()) {
    EXPECT_EQ(wall.rfind("last iteration: wall time ", 0), 0u) << untraced;
  }
}

TEST_F(Cli, SharedCoresAreOneWarning) {
  // Another corun on the same cores (a long training run, stopped afterwards).
  const std::string home = "STARPU_HOME=" + shell_quote(path("home")) + " ";
  auto beside_busy = [&](const std::string& env, const std::string& args) {
    return corun::testing::run_command(  // one subshell: run_command redirects the whole of it
        dir_, "(" +
                  corun_command("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 100000000", home) +
                  " >/dev/null 2>&1 & busy=$!; sleep 1; " + corun_command(args, home + env) +
                  "; rc=$?; kill $busy; wait $busy; exit $rc)");
  };
  const Result r = beside_busy("", "train " + kTiny + " --iters 2");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(count(r.err, "warning: the cores are shared: another "), 1u) << r;
  EXPECT_HAS(r.err, "timings will be slower and noisier");
  const Result serve = beside_busy("", "serve-bench --cell lstm --input 8 --hidden 8 --batch 1 --seq 2 --impl gemms "
                                       "--requests 5");
  ASSERT_EQ(serve.code, 0) << serve;
  EXPECT_EQ(count(serve.err, "corun serve-bench: warning: the cores are shared"), 1u) << serve;
  const Result quiet = beside_busy("CORUN_QUIET=1", "train " + kTiny + " --iters 2");
  ASSERT_EQ(quiet.code, 0) << quiet;
  EXPECT_FALSE(contains(quiet.err, "cores are shared")) << quiet;
}

}  // namespace
