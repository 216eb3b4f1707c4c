// Finite-difference checks of the normalisation ops' backward rules (batch_norm in training and inference
// mode, layer_norm over one and several trailing axes), and training-mode batch_norm's running statistics
// after k steps against the update formula, and Graph::fold_batch_norm's numbers against the unfolded
// graph's; fixture in op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace corun {
namespace {

using test::OpGradient;

// x, scale and bias all checked; the batch statistics' gradient flows through the mean and the variance.
TEST_F(OpGradient, BatchNormTraining4d) {
  const Tensor x = param("x", {3, 2, 2, 3});
  const Tensor scale = param("scale", {2}, 0.5f, 1.5f);
  const Tensor bias = param("bias", {2});
  const Tensor rm = g_.state("bn.running_mean", {2});
  const Tensor rv = g_.state("bn.running_var", {2}, 1.0f);
  check(linear_loss(g_.batch_norm(x, scale, bias, rm, rv, 1e-5f, 0.9f, true, "bn")));
}

TEST_F(OpGradient, BatchNormTraining2d) {
  const Tensor x = param("x", {5, 3});
  const Tensor scale = param("scale", {3}, 0.5f, 1.5f);
  const Tensor bias = param("bias", {3});
  const Tensor rm = g_.state("bn.running_mean", {3});
  const Tensor rv = g_.state("bn.running_var", {3}, 1.0f);
  check(linear_loss(g_.batch_norm(x, scale, bias, rm, rv, 1e-5f, 0.9f, true, "bn")));
}

// Inference: the running statistics are constants, dX = scale invstd dY.
TEST_F(OpGradient, BatchNormInference) {
  const Tensor x = param("x", {2, 3, 2, 2});
  const Tensor scale = param("scale", {3}, 0.5f, 1.5f);
  const Tensor bias = param("bias", {3});
  const Tensor rm = input("running_mean", {3});
  const Tensor rv = input("running_var", {3}, 0.5f, 2.0f);
  check(linear_loss(g_.batch_norm(x, scale, bias, rm, rv, 1e-5f, 0.9f, false, "bn")));
}

TEST_F(OpGradient, LayerNormLastAxis) {
  const Tensor x = param("x", {4, 5});
  const Tensor scale = param("scale", {5}, 0.5f, 1.5f);
  const Tensor bias = param("bias", {5});
  check(linear_loss(g_.layer_norm(x, scale, bias)));
}

TEST_F(OpGradient, LayerNormTwoAxes) {
  const Tensor x = param("x", {2, 3, 4});
  const Tensor scale = param("scale", {3, 4}, 0.5f, 1.5f);
  const Tensor bias = param("bias", {3, 4});
  check(linear_loss(g_.layer_norm(x, scale, bias, 1)));
}

// k training steps with a different batch each: the running statistics follow
// running = m running + (1 - m) batch (unbiased variance), computed here in double from the batches.
TEST_F(OpGradient, BatchNormRunningStatsAfterKSteps) {
  const int64_t n = 4, c = 3, hw = 5, k = 4;
  const float momentum = 0.8f;
  const Tensor x = g_.input("x", {n, c, hw});
  const Tensor scale = g_.param("scale", {c});
  const Tensor bias = g_.param("bias", {c});
  const Tensor rm = g_.state("bn.running_mean", {c});
  const Tensor rv = g_.state("bn.running_var", {c}, 1.0f);
  const Tensor y = g_.batch_norm(x, scale, bias, rm, rv, 1e-5f, momentum, true, "bn");
  g_.backward(g_.reduce_sum(g_.mul(y, y)), {.learning_rate = 0.01f});
  Engine& eng = *engine_;
  struct Release {
    Engine& e;
    Graph& g;
    ~Release() { e.release(g); }
  } release{eng, g_};
  std::vector<double> want_mean(c, 0.0), want_var(c, 1.0);
  std::uniform_real_distribution<float> dist(-2.0f, 3.0f);
  for (int step = 0; step < k; ++step) {
    std::vector<float> batch(static_cast<size_t>(n * c * hw));
    for (float& v : batch) v = dist(rng_);
    eng.write(g_, x, batch);
    eng.run(g_);
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0.0, sq = 0.0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t s = 0; s < hw; ++s) sum += batch[static_cast<size_t>((b * c + ch) * hw + s)];
      const double mean = sum / static_cast<double>(n * hw);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t s = 0; s < hw; ++s) {
          const double d = batch[static_cast<size_t>((b * c + ch) * hw + s)] - mean;
          sq += d * d;
        }
      want_mean[static_cast<size_t>(ch)] = momentum * want_mean[static_cast<size_t>(ch)] + (1.0 - momentum) * mean;
      want_var[static_cast<size_t>(ch)] =
          momentum * want_var[static_cast<size_t>(ch)] + (1.0 - momentum) * sq / static_cast<double>(n * hw - 1);
    }
  }
  const std::vector<float> got_mean = eng.read(g_, rm), got_var = eng.read(g_, rv);
  for (int64_t ch = 0; ch < c; ++ch) {
    EXPECT_NEAR(got_mean[static_cast<size_t>(ch)], want_mean[static_cast<size_t>(ch)], 1e-5) << "channel " << ch;
    EXPECT_NEAR(got_var[static_cast<size_t>(ch)], want_var[static_cast<size_t>(ch)], 1e-5) << "channel " << ch;
  }
  // The statistics moved away from their start, so the comparison is not of two initial values.
  EXPECT_GT(std::fabs(got_var[0] - 1.0f), 1e-2f);
}

// conv2d -> inference batch_norm -> relu, once as built and once folded: the same output up to rounding,
// with the batch_norm node gone; with and without a convolution bias (torchvision's convolutions before a
// BatchNorm have none: the fold adds one).
class FoldBatchNorm : public OpGradient, public ::testing::WithParamInterface<bool> {};

TEST_P(FoldBatchNorm, MatchesUnfolded) {
  const bool with_bias = GetParam();
  const auto build = [&](Graph& g, std::mt19937_64 rng) {
    const Tensor x = g.input("x", {2, 3, 6, 5});
    const Tensor w = g.param("w", {4, 3, 3, 3});
    const Tensor scale = g.param("scale", {4}), bias = g.param("bias", {4});
    const Tensor rm = g.state("rm", {4}), rv = g.state("rv", {4});
    for (Tensor t : {x, w, scale, bias, rm}) test::fill_uniform(g, t, rng, -1.0f, 1.0f);
    test::fill_uniform(g, rv, rng, 0.5f, 2.0f);
    Tensor b;  // none: Tensor()
    if (with_bias) {
      b = g.param("b", {4});
      test::fill_uniform(g, b, rng, -1.0f, 1.0f);
    }
    Conv2dOptions o;
    o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
    const Tensor conv = g.conv2d(x, w, b, o);
    return g.relu(g.batch_norm(conv, scale, bias, rm, rv, 1e-5f, 0.9f, false, "bn"), "out");
  };
  Graph folded;
  const Tensor y_plain = build(g_, rng_), y_folded = build(folded, rng_);
  EXPECT_EQ(folded.fold_batch_norm(), 1);
  EXPECT_EQ(folded.num_nodes(), g_.num_nodes() - 1);
  Engine& eng = *engine_;
  eng.run(g_);
  const std::vector<float> want = eng.read(g_, y_plain);
  eng.release(g_);
  eng.run(folded);
  const std::vector<float> got = eng.read(folded, y_folded);
  eng.release(folded);
  ASSERT_EQ(got.size(), want.size());
  double largest = 0.0;
  for (float v : want) largest = std::max(largest, static_cast<double>(std::fabs(v)));
  ASSERT_GT(largest, 0.1);  // the relu leaves something to compare
  for (size_t e = 0; e < want.size(); ++e) EXPECT_NEAR(got[e], want[e], 1e-5 + 1e-5 * std::fabs(want[e])) << e;
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutConvBias, FoldBatchNorm, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "bias" : "no_bias"; });

}  // namespace
}  // namespace corun
