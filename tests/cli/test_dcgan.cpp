// `corun train --model dcgan` end to end (docs/models.md#dcgan): a few tiny iterations train both networks
// with finite losses, the same numbers under every policy, an 8x8 PNG grid with a valid signature and IHDR,
// --save/--load of both networks, and bad outputs refused before the first iteration.
#include "common/corun_process_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#ifndef CORUN_EXE
#error "CORUN_EXE must be defined to the path of the corun executable"
#endif

namespace {

namespace fs = std::filesystem;
using corun::testing::read_file;
using Result = corun::testing::CommandResult;

const char* kFashionMnist = "/usr/share/datasets/fashion-mnist";
// Tiny: 8 filters, batch 8 (a fraction of a second per iteration on 2 cores).
const std::string kTiny = "train --model dcgan --filters 8 --batch 8";

std::vector<double> json_array(const std::string& json, const std::string& key) {
  std::vector<double> out;
  const auto at = json.find("\"" + key + "\":[");
  if (at == std::string::npos) return out;
  const auto start = at + key.size() + 4;
  std::istringstream in(json.substr(start, json.find(']', start) - start));
  for (std::string v; std::getline(in, v, ',');) out.push_back(std::strtod(v.c_str(), nullptr));
  return out;
}

uint32_t be32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

class Dcgan : public corun::testing::CorunProcessTest {
 protected:
  // CORUN_PARALLEL_OPS unset: the default is what these runs check.
  Dcgan() : CorunProcessTest("dcgan", corun::testing::corun_test_env({"CORUN_PARALLEL_OPS"})) {}
  void SetUp() override {
    CorunProcessTest::SetUp();
    if (!fs::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " missing (Debian package dataset-fashion-mnist)";
  }
};

TEST_F(Dcgan, TrainsBothNetworksAndWritesTheSampleGrid) {
  const Result r = corun(kTiny + " --iters 3 --samples s.png --json r.json --save params");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("| iteration | ms | loss D | loss G |"), std::string::npos) << r;
  EXPECT_NE(r.out.find("| 3 |"), std::string::npos) << "a row per iteration: " << r;
  const std::string json = read_file(path("r.json"));
  const std::vector<double> d = json_array(json, "loss_d"), g = json_array(json, "loss_g");
  ASSERT_EQ(d.size(), 3u) << json;
  ASSERT_EQ(g.size(), 3u) << json;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isfinite(d[i]) && d[i] > 0.0) << "loss D " << d[i];
    EXPECT_TRUE(std::isfinite(g[i]) && g[i] > 0.0) << "loss G " << g[i];
  }
  // Untrained, D guesses about 1/2 for both batches: loss D near 2 ln 2 = 1.39, loss G near ln 2 = 0.69.
  EXPECT_NEAR(d[0], 1.39, 0.5);
  EXPECT_NEAR(g[0], 0.69, 0.5);
  const std::string png = read_file(path("s.png"));
  ASSERT_GT(png.size(), 33u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(png, 16), 8u * 32u + 9u * 2u) << "8 columns of 32 px with 2 px borders";
  EXPECT_EQ(be32(png, 20), 8u * 32u + 9u * 2u);
  EXPECT_EQ(png[24], 8) << "bit depth";
  EXPECT_EQ(png[25], 0) << "greyscale";
  EXPECT_EQ(png.substr(png.size() - 8, 4), "IEND");
  // Both networks, their statistics and Adam moments; not the throwaway statistics of the copies.
  for (const char* f : {"g.convt0.w.npy", "g.bn0.running_var.npy", "g.convt3.w.adam_m.npy", "d.conv0.w.npy",
                        "d.bn1.scale.npy", "d.conv3.w.adam_v.npy"})
    EXPECT_TRUE(fs::exists(path(std::string("params/") + f))) << f;
  for (const auto& e : fs::directory_iterator(path("params")))
    EXPECT_NE(e.path().filename().string().rfind("aux.", 0), 0u) << e.path();
  // --load continues from them: a loaded D already tells real from fake better than a fresh one.
  const Result again = corun(kTiny + " --iters 1 --load params --json again.json");
  ASSERT_EQ(again.code, 0) << again;
  const std::vector<double> d2 = json_array(read_file(path("again.json")), "loss_d");
  ASSERT_EQ(d2.size(), 1u);
  EXPECT_LT(d2[0], d[0]) << "--load did not restore the trained discriminator";
}

// The kernels give the same numbers under every policy, so the GAN's losses agree exactly.
TEST_F(Dcgan, EveryPolicyComputesTheSameLosses) {
  std::vector<std::string> losses;
  for (const char* policy : {"lws", "corun", "cpf"}) {
    const Result r = corun(kTiny + " --iters 2 --json " + policy + ".json", std::string("CORUN_SCHED=") + policy);
    ASSERT_EQ(r.code, 0) << r;
    const std::string json = read_file(path(std::string(policy) + ".json"));
    losses.push_back(json.substr(json.find("\"loss_d\"")));
    losses.back() = losses.back().substr(0, losses.back().find("\"d_real\""));
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(losses[0], losses[2]);
}

TEST_F(Dcgan, BadOutputsFailBeforeTheFirstIteration) {
  const Result missing = corun(kTiny + " --iters 100000 --samples no/such/dir/s.png");
  EXPECT_EQ(missing.code, 1) << missing;
  EXPECT_NE(missing.err.find("--samples"), std::string::npos) << missing;
  EXPECT_EQ(missing.out.find("| 1 |"), std::string::npos) << "an iteration ran: " << missing;
  const Result not_png = corun(kTiny + " --iters 1 --samples s.jpg");
  EXPECT_EQ(not_png.code, 2) << not_png;
  EXPECT_NE(not_png.err.find(".png"), std::string::npos) << not_png;
  const Result other = corun(kTiny + " --iters 1 --checkpoint ck");
  EXPECT_EQ(other.code, 2) << other;
  EXPECT_NE(other.err.find("does not apply to --model dcgan"), std::string::npos) << other;
  EXPECT_FALSE(fs::exists(path("ck")));
}

}  // namespace
