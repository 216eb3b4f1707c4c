// Finite-difference checks of the backward rules of the CNN ops (conv2d, pooling, add_n, reshape) and of
// a small CNN; fixture in op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <gtest/gtest.h>

namespace corun {
namespace {

using test::fill_targets;
using test::OpGradient;

// ---- conv2d: every parameter of X, W, B checked; stride, padding, 1x1 ----

struct ConvGeometry {
  const char* name;
  int n, c, h, w, k, r, stride, pad;
};

void PrintTo(const ConvGeometry& g, std::ostream* os) { *os << g.name; }  // names, not bytes, in test lists

class ConvGradient : public OpGradient, public ::testing::WithParamInterface<ConvGeometry> {};

TEST_P(ConvGradient, XWB) {
  const ConvGeometry q = GetParam();
  const Tensor x = param("x", {q.n, q.c, q.h, q.w});
  const Tensor w = param("w", {q.k, q.c, q.r, q.r});
  const Tensor b = param("b", {q.k});
  check(linear_loss(g_.conv2d(x, w, b, q.stride, q.pad)));
}

INSTANTIATE_TEST_SUITE_P(Geometries, ConvGradient,
                         ::testing::Values(ConvGeometry{"k3s1p1", 2, 2, 4, 5, 3, 3, 1, 1},
                                           ConvGeometry{"k3s2p0", 2, 2, 5, 5, 2, 3, 2, 0},
                                           ConvGeometry{"k1s1p0", 2, 3, 3, 3, 2, 1, 1, 0},
                                           ConvGeometry{"k5s1p2", 1, 1, 5, 4, 2, 5, 1, 2}),
                         [](const auto& p) { return std::string(p.param.name); });

// ---- pooling: distinct, well separated values so a step of 1e-2 never changes a window's max ----

TEST_F(OpGradient, MaxPoolOverlapping3s2) {
  const Tensor x = param("x", {2, 2, 5, 5});
  float* d = g_.data(x);
  std::vector<int> order(50);
  for (int e = 0; e < 50; ++e) order[static_cast<size_t>(e)] = e;
  std::shuffle(order.begin(), order.end(), rng_);
  for (int e = 0; e < 50; ++e) d[e] = 0.1f * static_cast<float>(order[static_cast<size_t>(e)]) - 2.5f;
  check(linear_loss(g_.max_pool(x, 3, 2)));
}

TEST_F(OpGradient, MaxPoolPadded2s2) {
  const Tensor x = param("x", {1, 2, 5, 4});
  float* d = g_.data(x);
  std::vector<int> order(40);
  for (int e = 0; e < 40; ++e) order[static_cast<size_t>(e)] = e;
  std::shuffle(order.begin(), order.end(), rng_);
  for (int e = 0; e < 40; ++e) d[e] = 0.1f * static_cast<float>(order[static_cast<size_t>(e)]) - 2.0f;
  check(linear_loss(g_.max_pool(x, 2, 2, 1)));
}

TEST_F(OpGradient, AvgPoolOverlapping3s2) {
  const Tensor x = param("x", {2, 2, 5, 5});
  check(linear_loss(g_.avg_pool(x, 3, 2)));
}

TEST_F(OpGradient, AvgPoolPadded3s1) {  // border windows divide by fewer positions
  const Tensor x = param("x", {1, 2, 4, 3});
  check(linear_loss(g_.avg_pool(x, 3, 1, 1)));
}

// ---- add_n / reshape ----

TEST_F(OpGradient, AddNThreeOperandsOneTwice) {
  const Tensor a = param("a", {2, 3, 2, 2});
  const Tensor b = param("b", {2, 3, 2, 2});
  check(linear_loss(g_.add_n({a, b, a})));
}

TEST_F(OpGradient, ReshapeFlatten) {
  const Tensor x = param("x", {2, 3, 2, 2});
  const Tensor y = g_.reshape(x, {2, 12});
  ASSERT_EQ(y.shape(), (Shape{2, 12}));
  check(linear_loss(y));
}

// A small CNN: conv -> avg pool -> conv -> avg pool -> flatten -> dense -> softmax cross-entropy (max
// pooling is checked above on separated values: here near-ties of conv outputs would flip under a step).
TEST_F(OpGradient, SmallCnn) {
  const Tensor x = input("x", {2, 1, 6, 6});
  const Tensor w1 = param("w1", {3, 1, 3, 3}, -0.5f, 0.5f);
  const Tensor b1 = param("b1", {3}, -0.1f, 0.1f);
  const Tensor w2 = param("w2", {2, 3, 3, 3}, -0.5f, 0.5f);
  const Tensor b2 = param("b2", {2}, -0.1f, 0.1f);
  const Tensor wd = param("wd", {8, 3});
  Tensor h = g_.avg_pool(g_.conv2d(x, w1, b1, 1, 1), 2, 2);  // [2,3,3,3]
  h = g_.avg_pool(g_.conv2d(h, w2, b2, 1, 1), 2, 1);         // [2,2,2,2]
  const Tensor logits = g_.matmul(g_.reshape(h, {2, 8}), wd);
  const Tensor t = g_.input("t", {2, 3});
  fill_targets(g_, t, rng_);
  check(g_.softmax_xent(logits, t));
}

}  // namespace
}  // namespace corun
