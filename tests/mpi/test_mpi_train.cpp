// `mpirun --oversubscribe -np N corun train`, end to end (docs/batch-jobs.md#several-nodes), with tiny models:
// - 2 ranks of one replica each compute bitwise what one process with 2 replicas computes (the rank tree is
//   the replica tree), losses and final parameters, for the LSTM (plain SGD) and CIFAR-quick (momentum);
// - and what one solver over the whole batch computes within 1e-5 relative (the gradient is summed in
//   another order, so not bitwise);
// - --resume across ranks continues bitwise;
// - rank 0 alone reports and writes; a batch the ranks cannot share, ranks started with different arguments,
//   and a rank killed mid-run end the job with a non-zero exit and a message that names the problem or rank.
#include <corun/npy.hpp>

#include "common/corun_process_test.hpp"
#include "common/run_results.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using corun::testing::losses_of;
using corun::testing::read_file;
using corun::testing::shell_quote;
using Result = corun::testing::CommandResult;

const std::string kLstm = "--model lstm --layers 1 --seq 4 --hidden 16 --batch 8 --iters 4";
const std::string kCifar = "--model cifar-quick --batch 16 --iters 3 --eval-images 100";

std::vector<double> numbers(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  for (std::string v; std::getline(in, v, ',');) out.push_back(std::stod(v));
  return out;
}
size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}
double relative(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-30}); }

class MpiTrain : public corun::testing::CorunProcessTest {
 protected:
  // No NUMA split or replicas from the caller: every rank is one replica; StarPU's banner silenced per rank.
  MpiTrain()
      : CorunProcessTest("mpi", corun::testing::corun_test_env({"CORUN_NUMA", "CORUN_REPLICAS"},
                                                               "CORUN_QUIET=1 STARPU_SILENT=1")) {}

  // One worker per process (STARPU_NCPU=1): 2-4 ranks share the CI machine's cores (their drivers spin while idle).
  static std::string mpirun(int ranks) {
    return std::string(CORUN_MPIRUN) + " --oversubscribe --allow-run-as-root -np " + std::to_string(ranks) +
           " -x CORUN_QUIET -x STARPU_SILENT -x STARPU_NCPU ";
  }
  // `corun train ARGS` as N ranks (STARPU_NCPU=1 each), writing NAME.json and parameters into NAME/.
  Result ranks(int n, const std::string& args, const std::string& name) {
    return corun("train " + args + " --json " + name + ".json --save " + name, "STARPU_NCPU=1", mpirun(n));
  }
  // One process: `replicas` replicas (one worker each), or one solver (replicas 0).
  Result process(int replicas, const std::string& args, const std::string& name) {
    const std::string env = replicas > 0 ? "CORUN_NUMA=replicate CORUN_REPLICAS=" + std::to_string(replicas) +
                                               " STARPU_NCPU=" + std::to_string(replicas) + " "
                                         : "CORUN_NUMA=off STARPU_NCPU=1 ";
    return corun("train " + args + " --json " + name + ".json --save " + name, env);
  }
  std::string losses(const std::string& name) { return losses_of(read_file(path(name + ".json"))); }

  // Every saved parameter of runs a and b: bitwise equal, or within `tolerance` relative (of the largest
  // magnitude of the parameter).
  void expect_same_params(const std::string& a, const std::string& b, double tolerance) {
    int compared = 0;
    for (const auto& e : fs::directory_iterator(path(a))) {
      const std::string file = e.path().filename().string();
      const corun::NpyArray x = corun::load_npy(path(a + "/" + file));
      const corun::NpyArray y = corun::load_npy(path(b + "/" + file));
      ASSERT_EQ(x.data.size(), y.data.size()) << file;
      if (tolerance == 0.0) {
        EXPECT_TRUE(x.data == y.data) << file << " differs between " << a << " and " << b;
      } else {
        double scale = 0.0, worst = 0.0;
        for (size_t i = 0; i < x.data.size(); ++i) scale = std::max(scale, std::abs(static_cast<double>(y.data[i])));
        for (size_t i = 0; i < x.data.size(); ++i)
          worst = std::max(worst, std::abs(static_cast<double>(x.data[i]) - y.data[i]) / std::max(scale, 1e-30));
        EXPECT_LE(worst, tolerance) << file << ": " << a << " vs " << b;
      }
      ++compared;
    }
    EXPECT_GE(compared, 2) << "no parameters saved in " << a;
  }
  void expect_close_losses(const std::string& a, const std::string& b) {
    const std::vector<double> x = numbers(losses(a)), y = numbers(losses(b));
    ASSERT_EQ(x.size(), y.size());
    ASSERT_FALSE(x.empty());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_LE(relative(x[i], y[i]), 1e-5) << "iteration " << i;
  }
};

TEST_F(MpiTrain, LstmTwoRanksEqualOneProcess) {
  const Result two = ranks(2, kLstm, "ranks2");
  ASSERT_EQ(two.code, 0) << two;
  const Result replicas = process(2, kLstm, "replicas2");
  ASSERT_EQ(replicas.code, 0) << replicas;
  const Result solver = process(0, kLstm, "solver");
  ASSERT_EQ(solver.code, 0) << solver;
  ASSERT_FALSE(losses("ranks2").empty()) << two;
  EXPECT_EQ(losses("ranks2"), losses("replicas2"));  // the same tree: bitwise
  expect_same_params("ranks2", "replicas2", 0.0);
  expect_close_losses("ranks2", "solver");  // the whole batch's mean in one sum: another order
  expect_same_params("ranks2", "solver", 1e-5);
  // Rank 0 alone reports: one results table, not one per rank.
  EXPECT_EQ(count(two.out, "| iterations |"), 1u) << two;
}

// Four replicas in one process would need four CPUs; four ranks are checked against the one solver.
TEST_F(MpiTrain, LstmFourRanksCloseToOneSolver) {
  const Result four = ranks(4, kLstm, "ranks4");
  ASSERT_EQ(four.code, 0) << four;
  const Result solver = process(0, kLstm, "solver");
  ASSERT_EQ(solver.code, 0) << solver;
  expect_close_losses("ranks4", "solver");
  expect_same_params("ranks4", "solver", 1e-5);
}

TEST_F(MpiTrain, CifarQuickWithMomentumTwoRanks) {
  const Result two = ranks(2, kCifar, "ranks2");
  ASSERT_EQ(two.code, 0) << two;
  const Result replicas = process(2, kCifar, "replicas2");
  ASSERT_EQ(replicas.code, 0) << replicas;
  const Result solver = process(0, kCifar, "solver");
  ASSERT_EQ(solver.code, 0) << solver;
  EXPECT_EQ(losses("ranks2"), losses("replicas2"));
  expect_same_params("ranks2", "replicas2", 0.0);
  expect_close_losses("ranks2", "solver");
  expect_same_params("ranks2", "solver", 1e-5);
  EXPECT_EQ(count(two.out, "test accuracy:"), 1u) << two;
}

// A job stopped after 2 iterations and resumed (--resume: rank 0 reads the checkpoint and shares parameters,
// velocities and the data position) ends bitwise where the uninterrupted job ends. CIFAR-quick: with momentum.
TEST_F(MpiTrain, ResumeAcrossRanksIsBitwise) {
  const std::string model = "--model cifar-quick --batch 8 --eval-images 10";
  const Result whole = ranks(2, model + " --iters 4", "whole");
  ASSERT_EQ(whole.code, 0) << whole;
  const Result first = ranks(2, model + " --iters 2 --checkpoint ck", "first");
  ASSERT_EQ(first.code, 0) << first;
  const Result rest = ranks(2, model + " --iters 4 --checkpoint ck --resume", "rest");
  ASSERT_EQ(rest.code, 0) << rest;
  EXPECT_HAS(rest.err, "resuming from");
  EXPECT_EQ(count(rest.err, "resuming from"), 1u) << "rank 0 alone reads the checkpoint: " << rest;
  EXPECT_EQ(losses("rest"), losses("whole"));
  expect_same_params("rest", "whole", 0.0);
}

TEST_F(MpiTrain, BatchTheRanksCannotShareIsAnError) {
  const Result r = ranks(4, "--model lstm --layers 1 --seq 4 --hidden 16 --batch 6 --iters 2", "bad");
  EXPECT_NE(r.code, 0) << r;
  EXPECT_HAS(r.err, "global batch of 6 samples does not split evenly over 4 ranks x 1 replicas");
  EXPECT_HAS(r.err, "of 4 failed: ending the job]");
  EXPECT_FALSE(fs::exists(path("bad.json"))) << r;
}

TEST_F(MpiTrain, RanksWithDifferentArgumentsAreRefusedAtStart) {
  const std::string train = shell_quote(CORUN_EXE) + " train " + kLstm;  // twice: one MPMD job of two programs
  const Result r = corun::testing::run_command(
      dir_, corun_env() + "STARPU_NCPU=1 " + std::string(CORUN_MPIRUN) +
                " --oversubscribe --allow-run-as-root -x CORUN_QUIET -x STARPU_SILENT -x STARPU_NCPU -np 1 " + train +
                " --lr 0.5 : -np 1 " + train + " --lr 0.25");
  EXPECT_NE(r.code, 0) << r;
  EXPECT_HAS(r.err, "do not run the same training: rank(s) 1 differ in the arguments");
  EXPECT_EQ(count(r.out, "| iterations |"), 0u) << "no step may run: " << r;
}

TEST_F(MpiTrain, KilledRankEndsTheJob) {
  // Rank 1 kills itself with SIGKILL two seconds in (exec keeps the shell's pid); the job has thousands of
  // iterations left and must end within seconds, not wait for the dead rank's gradients.
  const std::string rank_one_dies =
      "sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (sleep 2; kill -9 $$) & fi; exec \"$@\"' sh";
  const auto start = std::chrono::steady_clock::now();
  const Result r = corun("train --model lstm --layers 1 --seq 4 --hidden 16 --batch 8 --iters 1000000", "STARPU_NCPU=1",
                         mpirun(2) + rank_one_dies, "timeout -k 5 60 ");  // 124: our own timeout hit
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.code, 0) << r;
  EXPECT_NE(r.code, 124) << "the job hung until the test's own 60 s timeout: " << r;
  EXPECT_LT(seconds, 30.0) << r;
  EXPECT_HAS(r.err, "rank 1");
}

}  // namespace
