// `corun infer` end to end: usage errors (exit 2), a bad CORUN_PARALLEL_OPS (exit 1), and wide&deep
// batch-1 inference with the parallel-op pass on and off and inline (fewer tasks, the same logit); wide&deep and
// the Phased LSTM train from `corun train` with the loss falling.
#include "common/cli_run.hpp"
#include "common/temp_dir_test.hpp"
#include "onnx/onnx_model_builder.hpp"

#include <corun/npy.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef CORUN_EXE
#error "CORUN_EXE must be defined to the path of the corun executable"
#endif

namespace {

using corun::testing::shell_quote;
using Result = corun::testing::CommandResult;

class Infer : public corun::testing::TempDirTest {
 protected:
  Infer() : TempDirTest("infer") {}
  Result run(const std::string& args, const std::string& env = "") {
    return corun::testing::run_command(dir_, "env -u CORUN_SCHED -u STARPU_SCHED -u CORUN_PARALLEL_OPS "
                                             "-u CORUN_PARALLEL_OPS_MIN CORUN_QUIET=1 " +
                                                 env + " " + shell_quote(CORUN_EXE) + " infer " + args);
  }
};

// The cell of the results row under `column` (the table has one header row and one data row).
std::string cell(const std::string& out, int column) {
  const auto row = out.find("| wide-deep |");
  if (row == std::string::npos) return "";
  size_t at = row;
  for (int c = 0; c < column; ++c) at = out.find('|', at + 1);
  const size_t end = out.find('|', at + 1);
  std::string s = out.substr(at + 1, end - at - 1);
  return s.substr(s.find_first_not_of(' '), s.find_last_not_of(' ') - s.find_first_not_of(' ') + 1);
}

std::string logit_line(const std::string& out) {
  const auto at = out.find("last logit");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

TEST_F(Infer, UsageErrors) {
  for (const char* args : {"", "--model nosuch", "--model wide-deep --batch 0", "--model wide-deep --iters x",
                           "--model wide-deep --frobnicate", "--model", "--model wide-deep --exec fast"}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_HAS(r.err, "see `corun infer --help`");
  }
}

TEST_F(Infer, Help) {
  const Result r = run("--help");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "CORUN_PARALLEL_OPS");
}

TEST_F(Infer, BadPassSettingIsAConfigurationError) {
  Result r = run("--model wide-deep --iters 2", "CORUN_PARALLEL_OPS=maybe");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_PARALLEL_OPS");
  r = run("--model wide-deep --iters 2", "CORUN_PARALLEL_OPS_MIN=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_PARALLEL_OPS_MIN");
}

TEST_F(Infer, WideDeepWithAndWithoutThePass) {
  const Result on = run("--model wide-deep --iters 30 --warmup 2");
  ASSERT_EQ(on.code, 0) << on;
  EXPECT_HAS(on.err, "parallel-op pass on: 1 group(s), 38 -> 13 tasks");
  EXPECT_HAS(on.err, "group of 26 embedding (between)");
  EXPECT_EQ(cell(on.out, 1), "1");    // batch
  EXPECT_EQ(cell(on.out, 2), "30");   // inferences
  EXPECT_EQ(cell(on.out, 6), "13");   // tasks per inference
  EXPECT_EQ(cell(on.out, 7), "on");
  EXPECT_GT(std::stod(cell(on.out, 3)), 0.0) << on;  // median latency

  const Result off = run("--model wide-deep --iters 30 --warmup 2 --batch 1", "CORUN_PARALLEL_OPS=off");
  ASSERT_EQ(off.code, 0) << off;
  EXPECT_EQ(cell(off.out, 6), "38");
  EXPECT_EQ(cell(off.out, 7), "off");
  EXPECT_FALSE(logit_line(on.out).empty()) << on;
  EXPECT_EQ(logit_line(on.out), logit_line(off.out)) << "the pass changed the result";

  const Result big = run("--model wide-deep --iters 3 --warmup 1 --batch 8", "CORUN_PARALLEL_OPS_MIN=27");
  ASSERT_EQ(big.code, 0) << big;
  EXPECT_HAS(big.err, "parallel-op pass on: 0 group(s), 38 -> 38 tasks");
  EXPECT_EQ(cell(big.out, 1), "8");
}

// --exec inline: no StarPU at all, every kernel on the calling thread; the same numbers as the tasks.
TEST_F(Infer, InlineExecutionComputesWhatStarpuDoes) {
  for (const char* pass : {"on", "off"}) {
    const std::string env = std::string("CORUN_PARALLEL_OPS=") + pass;
    const Result tasks = run("--model wide-deep --iters 20 --warmup 2", env);
    const Result inl = run("--model wide-deep --iters 20 --warmup 2 --exec inline", env);
    ASSERT_EQ(tasks.code, 0) << tasks;
    ASSERT_EQ(inl.code, 0) << inl;
    EXPECT_EQ(cell(tasks.out, 8), "starpu");
    EXPECT_EQ(cell(inl.out, 8), "inline");
    EXPECT_EQ(cell(inl.out, 9), "inline");  // policy: none
    EXPECT_EQ(cell(inl.out, 6), cell(tasks.out, 6));  // nodes per inference
    EXPECT_GT(std::stod(cell(inl.out, 3)), 0.0) << inl;
    EXPECT_FALSE(logit_line(inl.out).empty()) << inl;
    EXPECT_EQ(logit_line(inl.out), logit_line(tasks.out)) << "inline and StarPU disagree (pass " << pass << ")";
  }
  const Result bad = run("--model wide-deep --exec Inline");
  EXPECT_EQ(bad.code, 2) << bad;
  EXPECT_HAS(bad.err, "--exec must be starpu, inline or auto");
}

// --exec auto: times both paths, says what each took, runs the faster; the numbers are the same either way.
TEST_F(Infer, AutoExecutionTimesBothAndRunsTheFaster) {
  const Result tasks = run("--model wide-deep --iters 20 --warmup 2");
  const Result chosen = run("--model wide-deep --iters 20 --warmup 2 --exec auto");
  ASSERT_EQ(tasks.code, 0) << tasks;
  ASSERT_EQ(chosen.code, 0) << chosen;
  EXPECT_HAS(chosen.err, "--exec auto: inline ");
  EXPECT_HAS(chosen.err, "(medians of 5 inferences): runs ");
  const std::string exec = cell(chosen.out, 8);
  EXPECT_TRUE(exec == "inline" || exec == "starpu") << chosen;
  EXPECT_HAS(chosen.err, "runs " + exec);
  EXPECT_EQ(logit_line(chosen.out), logit_line(tasks.out)) << "--exec auto computed other numbers";
}

// Issue 52: an ONNX initializer holding NaN was imported and `corun train --onnx` reported a finite loss. Both
// commands refuse the model (exit 1, naming the initializer and the flag) unless --allow-non-finite is given.
// x [4, 3] -> Gemm(W [2, 3] with a NaN, transB) -> y [4, 2].
TEST_F(Infer, OnnxNonFiniteInitializersAreRefusedUnlessAllowed) {
  corun::testing::OnnxModelBuilder b;
  b.input("x", {4, 3});
  b.init("w", {2, 3}, {1, 0, 0, 0, std::nanf(""), 0});
  auto* gemm = b.node("Gemm", {"x", "w"}, {"y"});
  corun::testing::OnnxModelBuilder::attr(gemm, "transB", int64_t{1});
  b.output("y", {4, 2});
  b.save(path("nan.onnx"));
  const std::string exe = shell_quote(CORUN_EXE);
  const std::string env = "env -u CORUN_SCHED -u STARPU_SCHED CORUN_QUIET=1 STARPU_HOME=" + shell_quote(dir_) + " ";
  for (const std::string& cmd : {std::string("infer --onnx nan.onnx --output out"),
                                 std::string("train --onnx nan.onnx --iters 1")}) {
    SCOPED_TRACE(cmd);
    const Result refused = corun::testing::run_command(dir_, env + exe + " " + cmd);
    EXPECT_EQ(refused.code, 1) << refused;
    EXPECT_HAS(refused.err, "initializer 'w' in ONNX file 'nan.onnx' is not finite: element 4 is nan");
    EXPECT_HAS(refused.err, "--allow-non-finite");
  }
  // Allowed, both get past the import: infer stops at the input file of the wrong shape it was given (checked
  // after the import; the files are read before it), train runs (its loss is NaN, which --allow-non-finite
  // also lets pass).
  const std::vector<float> wrong(15, 1.0f);
  corun::save_npy(path("wrong.npy"), corun::Shape{5, 3}, wrong.data());
  const Result infer = corun::testing::run_command(dir_, env + exe + " infer --onnx nan.onnx --output out "
                                                              "--allow-non-finite --input x=wrong.npy");
  EXPECT_EQ(infer.code, 1) << infer;
  EXPECT_HAS(infer.err, "--input x: wrong.npy has the shape [5, 3], the model's input is [4, 3]");
  EXPECT_EQ(infer.err.find("not finite"), std::string::npos) << infer;
  const Result train = corun::testing::run_command(dir_, env + exe + " train --onnx nan.onnx --iters 1 "
                                                              "--allow-non-finite");
  EXPECT_EQ(train.code, 0) << train;
}

// Issue 51: a dynamic batch axis takes its size from the --input files; --batch, if given, must agree with
// them, and two inputs must agree with each other. x [N, 3] -> Relu -> y, with z [N, 3] -> Add when `two`.
TEST_F(Infer, OnnxDynamicBatchComesFromTheInputFiles) {
  for (const bool two : {false, true}) {
    corun::testing::OnnxModelBuilder b;
    b.input("x", {-1, 3});
    if (two) b.input("z", {-1, 3});
    b.node("Relu", {"x"}, {two ? "r" : "y"});
    if (two) b.node("Add", {"r", "z"}, {"y"});
    b.output("y", {-1, 3});
    b.save(path(two ? "two.onnx" : "one.onnx"));
  }
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6, 7, -8, 9, -10, 11, -12, 13, -14, 15};
  corun::save_npy(path("x.npy"), corun::Shape{5, 3}, x.data());
  corun::save_npy(path("z4.npy"), corun::Shape{4, 3}, x.data());
  const std::string exe = shell_quote(CORUN_EXE);
  const std::string env = "env -u CORUN_SCHED -u STARPU_SCHED CORUN_QUIET=1 STARPU_HOME=" + shell_quote(dir_) + " ";
  for (const char* batch : {"", " --batch 5"}) {
    const Result r = corun::testing::run_command(dir_, env + exe + " infer --onnx one.onnx --input x=x.npy "
                                                                  "--exec inline --output out" + batch);
    ASSERT_EQ(r.code, 0) << r;
    const corun::NpyArray y = corun::load_npy(path("out/y.npy"));
    EXPECT_EQ(y.shape, (corun::Shape{5, 3})) << batch;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y.data[i], std::max(x[i], 0.0f)) << i;
  }
  const Result disagree =
      corun::testing::run_command(dir_, env + exe + " infer --onnx one.onnx --input x=x.npy --output bad --batch 4");
  EXPECT_EQ(disagree.code, 1) << disagree;
  EXPECT_HAS(disagree.err, "the data for graph input 'x' holds a batch of 5, but --batch is 4; drop --batch");
  const Result two = corun::testing::run_command(
      dir_, env + exe + " infer --onnx two.onnx --input x=x.npy --input z=z4.npy --output bad");
  EXPECT_EQ(two.code, 1) << two;
  EXPECT_HAS(two.err, "holds a batch of");
  EXPECT_HAS(two.err, "give every input the same batch");
  EXPECT_FALSE(std::filesystem::exists(path("bad"))) << "an output was written";
}

}  // namespace

// wide&deep also trains from `corun train` (batch 256 on its synthetic click task): the loss falls.
TEST_F(Infer, WideDeepTrainsFromCorunTrain) {
  const Result r = corun::testing::run_command(
      dir_, "env -u CORUN_SCHED -u STARPU_SCHED CORUN_QUIET=1 " + shell_quote(CORUN_EXE) +
                " train --model wide-deep --iters 12 --json r.json");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "wide&deep train: batch=256 tables=26x10000x16");
  const std::string json = corun::testing::read_file(path("r.json"));
  auto number = [&](const std::string& key) {
    const auto at = json.find("\"" + key + "\":");
    return at == std::string::npos ? 0.0 : std::strtod(json.c_str() + at + key.size() + 3, nullptr);
  };
  EXPECT_GT(number("first_loss"), 0.6) << json;  // about ln 2 at the start
  EXPECT_LT(number("final_loss"), 0.9 * number("first_loss")) << json;
  const Result bad = corun::testing::run_command(
      dir_, "env CORUN_QUIET=1 " + shell_quote(CORUN_EXE) + " train --model wide-deep --size large");
  EXPECT_EQ(bad.code, 2) << bad;
  EXPECT_HAS(bad.err, "--size applies to --model");
}

// The Phased LSTM at --size small (4 layers, hidden 128, seq 20) leaves its plateau at ln 10 within 80
// steps at its default learning rate (2.0), with the learned periods and shifts: the loss clearly falls.
// (The numbers are bitwise the same under every policy and width; 80 steps take about 12 s on 2 cores.)
TEST_F(Infer, PhasedLstmSmallLearnsFromCorunTrain) {
  const Result r = corun::testing::run_command(
      dir_, "env -u CORUN_SCHED -u STARPU_SCHED CORUN_QUIET=1 " + shell_quote(CORUN_EXE) +
                " train --model phased-lstm --size small --iters 80 --json r.json");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "PhasedLSTM train: layers=4 batch=64 seq=20 hidden=128 lr=2");
  const std::string json = corun::testing::read_file(path("r.json"));
  const auto at = json.find("\"loss\":[");
  ASSERT_NE(at, std::string::npos) << json;
  std::vector<double> losses;
  for (const char* p = json.c_str() + at + 8; *p != ']';) {
    char* end = nullptr;
    losses.push_back(std::strtod(p, &end));
    ASSERT_NE(end, p) << json;
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  ASSERT_EQ(losses.size(), 80u);
  const double first = (losses[0] + losses[1] + losses[2]) / 3, last = (losses[77] + losses[78] + losses[79]) / 3;
  EXPECT_GT(first, 2.2);  // ln 10 = 2.30: chance level at the start
  EXPECT_LT(last, 0.5 * first) << "first 3 steps " << first << ", last 3 " << last;
}
