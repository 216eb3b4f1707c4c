// Finite-difference checks of issue 19's broadcasting family: binary_bcast (add, sub, mul, div, pow with
// numpy broadcasting, operands broadcast on either side), the unary math ops, clip, and reduce_sum_axes /
// reduce_mean. Each test chains a few ops so one engine start checks several rules; inputs keep away from
// poles and kinks by more than the step. Fixture in op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace corun {
namespace {

using test::OpGradient;

// Moves every element of `t` at least `gap` away from each of `kinks` (finite differences across a kink
// measure neither side's slope).
void keep_off(Graph& g, Tensor t, std::initializer_list<float> kinks, float gap) {
  float* d = g.data(t);
  for (int64_t e = 0; e < t.shape().numel(); ++e)
    for (const float k : kinks)
      if (std::fabs(d[e] - k) < gap) d[e] = d[e] < k ? k - gap : k + gap;
}

// [2,3,4] + [3,1], then [1] - that: add's and sub's gradients summed over the broadcast dims, on A's and
// B's side.
TEST_F(OpGradient, BroadcastAddSub) {
  const Tensor a = param("a", {2, 3, 4});
  const Tensor b = param("b", {3, 1});
  const Tensor c = param("c", {1});
  const Tensor s = g_.add(a, b);
  ASSERT_EQ(s.shape(), (Shape{2, 3, 4}));
  check(linear_loss(g_.sub(c, s)));
}

// [4,1,6] * [1,5,1] (both broadcast), then / [5,1].
TEST_F(OpGradient, BroadcastMulDiv) {
  const Tensor a = param("a", {4, 1, 6});
  const Tensor b = param("b", {1, 5, 1});
  const Tensor d = param("d", {5, 1}, 0.5f, 2.0f);
  const Tensor p = g_.mul(a, b);
  ASSERT_EQ(p.shape(), (Shape{4, 5, 6}));
  check(linear_loss(g_.div(p, d)));
}

// A positive base [3,4] to a per-column exponent [4], and a [1] base to a [2,3] exponent.
TEST_F(OpGradient, BroadcastPow) {
  const Tensor a = param("a", {3, 4}, 0.5f, 2.0f);
  const Tensor e = param("e", {4}, -1.0f, 1.5f);
  const Tensor c = param("c", {1}, 1.2f, 1.8f);
  const Tensor f = param("f", {2, 3}, -1.0f, 1.0f);
  const Tensor p1 = g_.pow(a, e);  // [3, 4]
  const Tensor p2 = g_.pow(c, f);  // [2, 3]
  // [3] + [2, 3]: the row sums of p1 broadcast over p2's rows.
  check(linear_loss(g_.add(g_.reduce_sum_axes(p1, {1}, false), p2)));
}

// sqrt, log, reciprocal on positive inputs; exp, erf, neg, abs on signed ones (abs away from 0).
TEST_F(OpGradient, UnaryMath) {
  const Tensor x1 = param("x1", {3, 5}, 0.5f, 2.0f);
  const Tensor x2 = param("x2", {3, 5}, 0.5f, 2.0f);
  const Tensor x3 = param("x3", {3, 5}, 0.5f, 2.0f);
  const Tensor x4 = param("x4", {3, 5});
  const Tensor x5 = param("x5", {3, 5});
  const Tensor x6 = param("x6", {3, 5});
  const Tensor x7 = param("x7", {3, 5});
  keep_off(g_, x7, {0.0f}, 0.1f);
  Tensor y = g_.add(g_.sqrt(x1), g_.log(x2));
  y = g_.add(y, g_.reciprocal(x3));
  y = g_.add(y, g_.exp(x4));
  y = g_.add(y, g_.erf(x5));
  y = g_.add(y, g_.neg(x6));
  y = g_.add(y, g_.abs(x7));
  check(linear_loss(y));
}

// ReLU6 and a narrow window, inputs off the kinks.
TEST_F(OpGradient, Clip) {
  const Tensor x = param("x", {4, 6}, -2.0f, 8.0f);
  const Tensor z = param("z", {4, 6});
  keep_off(g_, x, {0.0f, 6.0f}, 0.1f);
  keep_off(g_, z, {-0.5f, 0.25f}, 0.1f);
  check(linear_loss(g_.add(g_.clip(x, 0.0f, 6.0f), g_.clip(z, -0.5f, 0.25f))));
}

// reduce_sum_axes over {-1, 0} without keepdims: [2,3,4] -> [3].
TEST_F(OpGradient, ReduceSumAxes) {
  const Tensor x = param("x", {2, 3, 4});
  const Tensor y = g_.reduce_sum_axes(x, {-1, 0}, false);
  ASSERT_EQ(y.shape(), (Shape{3}));
  check(linear_loss(y));
}

// reduce_mean over the spatial dims with keepdims (GlobalAveragePool): [2,3,2,3] -> [2,3,1,1], then a
// broadcast multiply back over them, as squeeze-and-excitation does.
TEST_F(OpGradient, ReduceMeanKeepdims) {
  const Tensor x = param("x", {2, 3, 2, 3});
  const Tensor m = g_.reduce_mean(x, {2, 3}, true);
  ASSERT_EQ(m.shape(), (Shape{2, 3, 1, 1}));
  check(linear_loss(g_.mul(x, m)));
}

}  // namespace
}  // namespace corun
