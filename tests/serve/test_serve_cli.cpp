// `corun serve-bench` end to end: the planned runtime and both baselines print a plan and the latency
// line; the plan is cached in CORUN_SERVE_PLANS and reused by the next run; usage errors exit 2; --model
// text-similarity serves DeepCPU's text similarity model.
#include "common/corun_process_test.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include <cmath>
#include <filesystem>
#include <regex>

namespace {

// Every run caches its plans in the test's directory (CORUN_SERVE_PLANS).
class ServeBenchCli : public corun::testing::CorunProcessTest {
 protected:
  ServeBenchCli() : CorunProcessTest("serve_cli") {}
  corun::testing::CommandResult serve_bench(const std::string& args) {
    return corun("serve-bench " + args, "CORUN_SERVE_PLANS=" + corun::testing::shell_quote(dir_ + "/plans"));
  }
};

const std::regex kLatency(R"(latency: median ([0-9.]+) ms p99 ([0-9.]+) ms over 20 requests; ([0-9.]+) GFLOP/s)");

TEST_F(ServeBenchCli, PlansCachesAndReportsLatency) {
  const std::string args = "--cell lstm --input 16 --hidden 24 --batch 2 --seq 8 --requests 20";
  const auto first = serve_bench(args);
  ASSERT_EQ(first.code, 0) << first;
  EXPECT_NE(first.out.find("plan: schedule=hoist{"), std::string::npos) << first;
  EXPECT_NE(first.out.find("(calibrated ("), std::string::npos) << first;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.out, m, kLatency)) << first;
  EXPECT_GT(std::stod(m[1]), 0.0);
  EXPECT_GE(std::stod(m[2]), std::stod(m[1]));
  const auto again = serve_bench(args);
  ASSERT_EQ(again.code, 0) << again;
  EXPECT_NE(again.out.find("(cache " + dir_ + "/plans/"), std::string::npos) << again;
  const auto re = serve_bench(args + " --recalibrate");
  ASSERT_EQ(re.code, 0) << re;
  EXPECT_NE(re.out.find("(calibrated ("), std::string::npos) << re;
}

TEST_F(ServeBenchCli, BaselinesRunWithoutStarpu) {
  for (const char* impl : {"gemms", "fused"}) {
    const auto r = serve_bench(std::string("--cell gru --input 8 --hidden 8 --batch 1 --seq 5 --layers 2 "
                                           "--bidirectional --requests 20 --impl ") + impl);
    ASSERT_EQ(r.code, 0) << r;
    EXPECT_NE(r.out.find("plan: baseline"), std::string::npos) << r;
    EXPECT_NE(r.out.find("no StarPU"), std::string::npos) << r;
    EXPECT_TRUE(std::regex_search(r.out, kLatency)) << r;
  }
}

TEST_F(ServeBenchCli, UsageErrorsExitTwo) {
  for (const std::string args : {"--cell lstm --input 8 --hidden 8 --batch 1",                  // no --seq
                                 "--cell rnn --input 8 --hidden 8 --batch 1 --seq 2",           // bad cell
                                 "--cell lstm --input 0 --hidden 8 --batch 1 --seq 2",          // not positive
                                 "--cell lstm --input 8 --hidden 8 --batch 1 --seq 2 --frob",   // unknown flag
                                 "--cell lstm --input 8 --hidden 8 --batch 1 --seq 2x",         // junk number
                                 "--cell lstm --input 8 --hidden 8 --batch 1 --seq 2 --impl mkl"}) {
    const auto r = serve_bench(args);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_NE(r.err.find("see `corun serve-bench --help`"), std::string::npos) << r;
  }
  const auto missing = serve_bench("--cell lstm --input 8 --hidden 8 --batch 1 --seq 2 --weights " + dir_ + "/none");
  EXPECT_EQ(missing.code, 1) << missing;
  EXPECT_NE(missing.err.find("weight directory"), std::string::npos) << missing;
  // Issue 52 item 7: a file given as --weights was reported as a directory that "does not exist".
  { std::ofstream(dir_ + "/weights.npy") << "x"; }
  const auto file = serve_bench("--cell lstm --input 8 --hidden 8 --batch 1 --seq 2 --weights " + dir_ + "/weights.npy");
  EXPECT_EQ(file.code, 1) << file;
  EXPECT_NE(file.err.find("weights.npy is a file, not a directory"), std::string::npos) << file;
  EXPECT_EQ(file.err.find("does not exist"), std::string::npos) << file;
}

// --model text-similarity (cli/serve_bench_text.cpp): the built-in model on the engine prints its latency
// and one cosine per pair, the same ones for the same seed; the RNN layer's flags are refused, and so is an
// --onnx file that is missing (onnx.models_torch serves an exported one).
TEST_F(ServeBenchCli, ServesTheTextSimilarityModel) {
  const std::regex latency(R"(latency: median ([0-9.]+) ms p99 ([0-9.]+) ms over 5 requests\n)");
  const std::regex cosines(R"(similarity: (-?[0-9.]+) (-?[0-9.]+)\n)");
  const std::string args = "--model text-similarity --input 8 --hidden 6 --seq 4 --batch 2 --requests 5";
  const auto r = serve_bench(args);
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("text-similarity (built in) vocab=10000 embed=8 hidden=6 seq=4 batch=2"), std::string::npos)
      << r;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, latency)) << r;
  EXPECT_GE(std::stod(m[2]), std::stod(m[1]));
  ASSERT_TRUE(std::regex_search(r.out, m, cosines)) << r;
  for (int k = 1; k <= 2; ++k) EXPECT_LE(std::abs(std::stod(m[k])), 1.0 + 1e-6) << r;
  const auto again = serve_bench(args);
  std::smatch m2;
  ASSERT_TRUE(std::regex_search(again.out, m2, cosines)) << again;
  EXPECT_EQ(m.str(0), m2.str(0));
  for (const std::string bad : {"--model text-similarity --cell gru", "--model text-similarity --impl fused",
                                "--model text-similarity --onnx x.onnx --hidden 8", "--model lstm",
                                "--onnx x.onnx --cell gru --input 8 --hidden 8 --batch 1 --seq 2"}) {
    const auto u = serve_bench(bad);
    EXPECT_EQ(u.code, 2) << bad << "\n" << u;
  }
  const auto missing = serve_bench("--model text-similarity --onnx " + dir_ + "/none.onnx");
  EXPECT_EQ(missing.code, 1) << missing;
  EXPECT_NE(missing.err.find("none.onnx"), std::string::npos) << missing;
}

}  // namespace
