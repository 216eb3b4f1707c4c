// Every model of `corun train` with its defaults (issue 22): the loss curve a newcomer sees in the first 20
// iterations on a small machine must read as healthy: no loss above 1.5x the first, the last below the
// first, and the initialisation's first loss near chance for the classifiers. Each test runs the model's
// defaults (only the evaluation of cifar-quick is shortened), so a change of default is what it checks.
// Also: what a run announces before it starts (iterations, epochs, evaluation, heavy defaults).
#include "common/corun_process_test.hpp"

#include "base/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace corun::testing {
namespace {

// The "loss" array of a --json file (empty when the file is missing or has none).
std::vector<double> losses_of(const std::string& file) {
  if (!std::filesystem::exists(file)) return {};
  const json::Value v = json::parse_file(file);
  std::vector<double> loss;
  if (v.contains("loss"))
    for (const json::Value& x : v.at("loss")) loss.push_back(x.is_number() ? x.get<double>() : NAN);
  return loss;
}

// The runs keep the caller's CORUN_QUIET (the start lines are checked) and never replicate the solver.
class ModelDefaults : public CorunProcessTest {
 protected:
  ModelDefaults() : CorunProcessTest("defaults", corun_test_env({"CORUN_REPLICAS"}, "")) {}

  CommandResult run(const std::string& args) { return corun("train " + args); }

  // Trains `args` with --json and checks the curve of its 20 default iterations; returns the losses.
  std::vector<double> healthy_curve(const std::string& args) {
    const CommandResult r = run(args + " --json r.json");
    EXPECT_EQ(r.code, 0) << r;
    const std::vector<double> loss = losses_of(path("r.json"));
    EXPECT_EQ(loss.size(), 20u) << "the default run is 20 iterations\n" << r;
    if (loss.empty()) return loss;
    for (size_t k = 0; k < loss.size(); ++k) {
      EXPECT_TRUE(std::isfinite(loss[k])) << "iteration " << k + 1 << "\n" << r;
      EXPECT_LE(loss[k], 1.5 * loss[0]) << "iteration " << k + 1 << " jumped from the first loss\n" << r;
    }
    EXPECT_LT(loss.back(), loss.front()) << r;
    return loss;
  }

  // A small Fashion-MNIST stand-in in dir/data: `train` training and `test` test images (IDX, plain bytes;
  // the reader's gzread takes them as they are).
  std::string tiny_dataset(uint32_t train, uint32_t test) {
    const std::string data = path("data");
    std::filesystem::create_directories(data);
    const auto write = [&](const std::string& name, uint32_t magic, uint32_t count, bool images) {
      std::ofstream f(data + "/" + name, std::ios::binary);
      const auto u32 = [&](uint32_t v) {
        const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                           static_cast<char>(v)};
        f.write(b, 4);
      };
      u32(magic);
      u32(count);
      if (images) {
        u32(28);
        u32(28);
      }
      for (uint32_t k = 0; k < count * (images ? 28u * 28u : 1u); ++k) f.put(static_cast<char>(images ? k % 251 : k % 10));
    };
    write("train-images-idx3-ubyte.gz", 0x803, train, true);
    write("train-labels-idx1-ubyte.gz", 0x801, train, false);
    write("t10k-images-idx3-ubyte.gz", 0x803, test, true);
    write("t10k-labels-idx1-ubyte.gz", 0x801, test, false);
    return data;
  }
};

constexpr double kChance = 2.302585;  // ln(10): ten classes, every logit equal

TEST_F(ModelDefaults, Lstm) { healthy_curve("--model lstm"); }

TEST_F(ModelDefaults, PhasedLstm) { healthy_curve("--model phased-lstm"); }

TEST_F(ModelDefaults, WideDeep) { healthy_curve("--model wide-deep"); }

// Its initialisation starts at chance (it started at 31.5 and jumped to 136.8 before the module sums and the
// classifier were scaled), and the synthetic images' class colours are learnt within 20 steps.
TEST_F(ModelDefaults, PathNet) {
  const std::vector<double> loss = healthy_curve("--model pathnet");
  ASSERT_FALSE(loss.empty());
  EXPECT_NEAR(loss[0], kChance, 0.15);
  EXPECT_LT(loss.back(), 0.95 * loss[0]);
}

// Fashion-MNIST: 20 iterations of the defaults (the test-set evaluation shortened to 200 images).
TEST_F(ModelDefaults, CifarQuick) {
  const std::vector<double> loss = healthy_curve("--model cifar-quick --iters 20 --eval-images 200");
  ASSERT_FALSE(loss.empty());
  EXPECT_NEAR(loss[0], kChance, 0.15);
  EXPECT_LT(loss.back(), 0.8 * loss[0]);
}

// The heaviest default (about 2 s per iteration on 2 cores): 64 px, batch 32, warm-up over 20 iterations.
// It used to jump 3.4 -> 21 at the second step.
TEST_F(ModelDefaults, GoogLeNet) {
  const std::vector<double> loss = healthy_curve("--model googlenet");
  ASSERT_FALSE(loss.empty());
  EXPECT_NEAR(loss[0], kChance, 0.15);
}

// Without --iters cifar-quick trains a whole epoch, then evaluates the test set: it says so before starting.
TEST_F(ModelDefaults, CifarQuickAnnouncesItsEpochAndEvaluation) {
  const std::string data = tiny_dataset(128, 30);
  const CommandResult r = run("--model cifar-quick --data " + shell_quote(data));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(contains(r.err, "corun train: cifar-quick: 2 iterations of batch 64 at 28x28 px = 1 epoch of 128 "
                              "Fashion-MNIST images (no --iters), then the test accuracy on 30 test images"))
      << r;
  // Said before the first iteration, not after.
  EXPECT_LT(r.err.find("corun train: cifar-quick:"), r.err.find("iteration 1/2")) << r;
  EXPECT_TRUE(contains(r.out, "test accuracy:")) << r;
}

TEST_F(ModelDefaults, HeavyDefaultsSaySoInHelpAndStartLine) {
  const CommandResult help = run("--help");
  ASSERT_EQ(help.code, 0) << help;
  EXPECT_TRUE(contains(help.out, "heavy defaults: googlenet")) << help;
  EXPECT_TRUE(contains(help.out, "cifar-quick without --iters trains a whole epoch")) << help;
  const CommandResult g = run("--model googlenet --image 32 --batch 2 --iters 1");
  ASSERT_EQ(g.code, 0) << g;
  EXPECT_TRUE(contains(g.err, "corun train: googlenet: 1 iteration of batch 2 at 32x32 px")) << g;
  EXPECT_TRUE(contains(g.err, "heavy: GoogLeNet")) << g;
  const CommandResult l = run("--model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 2");
  ASSERT_EQ(l.code, 0) << l;
  EXPECT_TRUE(contains(l.err, "corun train: lstm: 2 iterations of batch 4 (sequences of 3 steps)\n")) << l;
  EXPECT_FALSE(contains(l.err, "heavy")) << l;
}

}  // namespace
}  // namespace corun::testing
