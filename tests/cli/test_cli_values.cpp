// Values, not shapes, of `corun train`'s output files (issue 21 item 9): --save writes the final parameters,
// --load starts from the given ones, and --dump-grads writes the gradient the last step used. Checked by
// identities no shared code can fake: one SGD step from loaded parameters W gives W - lr * G exactly (to
// the rounding of one multiply-add) with G the dumped gradient; a run loaded from the same files reports the
// same loss bitwise; and G matches central finite differences of the reported loss, computed by runs from
// perturbed parameter files (an outside recomputation of the gradient through the whole CLI).
#include "common/corun_process_test.hpp"

#include <corun/npy.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#ifndef CORUN_EXE
#error "CORUN_EXE must be defined to the path of the corun executable"
#endif

namespace {

using corun::testing::read_file;
using Result = corun::testing::CommandResult;

const std::string kTiny = "--model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --lr 0.5 --iters 1";
constexpr float kLr = 0.5f;
const char* const kParams[] = {"w0", "b0", "w_out", "b_out"};

// The first loss of a result file (written exactly: the text reads back to the same float).
double first_loss(const std::string& json_text) {
  const auto at = json_text.find("\"loss\":[");
  return at == std::string::npos ? std::nan("") : std::strtod(json_text.c_str() + at + 8, nullptr);
}

class CliValues : public corun::testing::CorunProcessTest {
 protected:
  CliValues() : CorunProcessTest("values") {}
  Result train(const std::string& args) { return corun("train " + args); }
  corun::NpyArray load(const std::string& name) { return corun::load_npy(path(name)); }
};

TEST_F(CliValues, SaveLoadAndDumpGradsHoldTheValuesOfOneSgdStep) {
  ASSERT_EQ(train(kTiny + " --save start").code, 0);  // some trained parameters W
  const Result step = train(kTiny + " --load start --save after --dump-grads grads --json step.json");
  ASSERT_EQ(step.code, 0) << step;
  for (const char* p : kParams) {
    SCOPED_TRACE(p);
    const corun::NpyArray w = load(std::string("start/") + p + ".npy");
    const corun::NpyArray g = load(std::string("grads/") + p + ".grad.npy");
    const corun::NpyArray after = load(std::string("after/") + p + ".npy");
    ASSERT_EQ(w.shape, after.shape);
    ASSERT_EQ(g.shape, after.shape);
    bool moved = false;
    for (size_t e = 0; e < w.data.size(); ++e) {
      const float want = w.data[e] - kLr * g.data[e];  // W -= lr * G, the sgd op
      // One rounding apart at most: the kernel may fuse the multiply-add.
      ASSERT_LE(std::fabs(after.data[e] - want), 2 * std::fabs(want) * 1.2e-7f + 1e-30f)
          << "element " << e << ": saved " << after.data[e] << ", W - lr G = " << want;
      moved = moved || after.data[e] != w.data[e];
    }
    EXPECT_TRUE(moved) << "the step changed nothing: the gradient is all zero";
  }
  // --load is what the run started from: the same files give the same loss, bitwise.
  const Result again = train(kTiny + " --load start --json again.json");
  ASSERT_EQ(again.code, 0) << again;
  EXPECT_EQ(first_loss(read_file(path("again.json"))), first_loss(read_file(path("step.json"))));
  const Result fresh = train(kTiny + " --json fresh.json");  // from the initial parameters instead
  ASSERT_EQ(fresh.code, 0) << fresh;
  EXPECT_NE(first_loss(read_file(path("fresh.json"))), first_loss(read_file(path("step.json"))));
}

TEST_F(CliValues, DumpedGradientsMatchFiniteDifferencesOfTheLoss) {
  ASSERT_EQ(train(kTiny + " --save start").code, 0);
  const Result base = train(kTiny + " --load start --dump-grads grads");
  ASSERT_EQ(base.code, 0) << base;
  // The three largest gradient entries of w_out and of w0 (large entries: the difference stands far above
  // the float rounding of the loss).
  for (const char* p : {"w_out", "w0"}) {
    const corun::NpyArray g = load(std::string("grads/") + p + ".grad.npy");
    std::vector<size_t> order(g.data.size());
    for (size_t e = 0; e < order.size(); ++e) order[e] = e;
    std::partial_sort(order.begin(), order.begin() + 3, order.end(),
                      [&](size_t a, size_t b) { return std::fabs(g.data[a]) > std::fabs(g.data[b]); });
    for (int k = 0; k < 3; ++k) {
      const size_t e = order[static_cast<size_t>(k)];
      SCOPED_TRACE(std::string(p) + "[" + std::to_string(e) + "]");
      const float eps = 1e-2f;
      double loss[2];
      for (int side = 0; side < 2; ++side) {
        const std::string dir = "fd" + std::to_string(side);
        std::filesystem::create_directories(path(dir));
        for (const char* q : kParams) {
          corun::NpyArray a = load(std::string("start/") + q + ".npy");
          if (std::string(q) == p) a.data[e] += side == 0 ? eps : -eps;
          corun::save_npy(path(dir + "/" + q + ".npy"), a.shape, a.data.data());
        }
        const Result r = train(kTiny + " --load " + dir + " --json " + dir + ".json");
        ASSERT_EQ(r.code, 0) << r;
        loss[side] = first_loss(read_file(path(dir + ".json")));
      }
      const double fd = (loss[0] - loss[1]) / (2.0 * eps);
      EXPECT_NEAR(g.data[e], fd, 0.02 * std::fabs(fd) + 2e-4) << "dumped " << g.data[e] << ", finite difference " << fd;
    }
  }
}

}  // namespace
