// Finite-difference checks of the general convolution and pooling forms (issue 19): grouped, depthwise,
// dilated, strided per axis, asymmetric padding, no bias; conv_transpose2d with and without bias;
// ceil-mode and count_include_pad pooling; global_avg_pool. Fixture in op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace corun {
namespace {

using test::OpGradient;

Conv2dOptions conv_options(int sh, int sw, int pt, int pl, int pb, int pr, int dh, int dw, int groups) {
  Conv2dOptions o;
  o.stride_h = sh, o.stride_w = sw, o.pad_top = pt, o.pad_left = pl, o.pad_bottom = pb, o.pad_right = pr;
  o.dilation_h = dh, o.dilation_w = dw, o.groups = groups;
  return o;
}

TEST_F(OpGradient, ConvGroupedDilatedAsymmetric) {
  const Tensor x = param("x", {2, 4, 6, 5});
  const Tensor w = param("w", {6, 2, 3, 2});
  const Tensor b = param("b", {6});
  check(linear_loss(g_.conv2d(x, w, b, conv_options(2, 1, 1, 0, 2, 1, 2, 1, 2))));
}

TEST_F(OpGradient, ConvDepthwiseMultiplierNoBias) {
  const Tensor x = param("x", {2, 3, 5, 5});
  const Tensor w = param("w", {6, 1, 3, 3});
  check(linear_loss(g_.conv2d(x, w, Tensor(), conv_options(1, 2, 1, 1, 1, 1, 1, 1, 3))));
}

TEST_F(OpGradient, ConvTransposeStridedBias) {
  Conv2dOptions o = conv_options(2, 2, 1, 0, 1, 1, 1, 1, 1);
  o.output_padding_h = 1;
  const Tensor x = param("x", {2, 3, 3, 4});
  const Tensor w = param("w", {3, 2, 3, 3});
  const Tensor b = param("b", {2});
  check(linear_loss(g_.conv_transpose2d(x, w, b, o)));
}

TEST_F(OpGradient, ConvTransposeGroupedDilatedNoBias) {
  const Tensor x = param("x", {1, 4, 3, 3});
  const Tensor w = param("w", {4, 3, 2, 2});
  check(linear_loss(g_.conv_transpose2d(x, w, Tensor(), conv_options(1, 2, 0, 1, 1, 0, 2, 1, 2))));
}

// Distinct, well separated values so a step of 1e-2 never changes a window's max.
void distinct(Graph& g, Tensor x, std::mt19937_64& rng) {
  float* d = g.data(x);
  const int n = static_cast<int>(x.shape().numel());
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int e = 0; e < n; ++e) d[e] = 0.1f * static_cast<float>(order[static_cast<size_t>(e)]) - 0.05f * n;
}

Pool2dOptions pool_options(int kh, int kw, int sh, int sw, int pt, int pl, int pb, int pr, bool ceil, bool inc) {
  Pool2dOptions o;
  o.kernel_h = kh, o.kernel_w = kw, o.stride_h = sh, o.stride_w = sw;
  o.pad_top = pt, o.pad_left = pl, o.pad_bottom = pb, o.pad_right = pr;
  o.ceil_mode = ceil, o.count_include_pad = inc;
  return o;
}

TEST_F(OpGradient, MaxPoolCeilAsymmetric) {
  const Tensor x = param("x", {2, 2, 6, 7});
  distinct(g_, x, rng_);
  check(linear_loss(g_.max_pool(x, pool_options(3, 2, 2, 2, 1, 0, 0, 1, true, false))));
}

TEST_F(OpGradient, AvgPoolCeilIncludePad) {
  const Tensor x = param("x", {2, 2, 6, 5});
  check(linear_loss(g_.avg_pool(x, pool_options(3, 3, 2, 2, 1, 1, 1, 1, true, true))));
}

TEST_F(OpGradient, GlobalAvgPool) {
  const Tensor x = param("x", {2, 3, 4, 5});
  check(linear_loss(g_.global_avg_pool(x)));
}

}  // namespace
}  // namespace corun
