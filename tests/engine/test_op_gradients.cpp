// Finite-difference checks of the backward rules of the elementwise and shape ops (matmul, add, sub, mul,
// the activations, concat, split, slice, sum); fixture in op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <gtest/gtest.h>

namespace corun {
namespace {

using test::fill_targets;
using test::OpGradient;

// ---- matmul: all four transpose combinations; C is [3, 5] with inner dimension 4. ----

class MatmulGradient : public OpGradient, public ::testing::WithParamInterface<std::pair<bool, bool>> {};

TEST_P(MatmulGradient, AllTransposes) {
  const auto [ta, tb] = GetParam();
  const Tensor a = param("a", ta ? Shape{4, 3} : Shape{3, 4});
  const Tensor b = param("b", tb ? Shape{5, 4} : Shape{4, 5});
  const Tensor c = g_.matmul(a, b, ta, tb);
  ASSERT_EQ(c.shape(), (Shape{3, 5}));
  check(linear_loss(c));
}

INSTANTIATE_TEST_SUITE_P(Transposes, MatmulGradient,
                         ::testing::Values(std::pair{false, false}, std::pair{true, false}, std::pair{false, true},
                                           std::pair{true, true}),
                         [](const auto& p) {
                           return std::string(p.param.first ? "At" : "A") + (p.param.second ? "Bt" : "B");
                         });

TEST_F(OpGradient, MatmulSameOperandTwice) {  // C = A^T A: both gradient contributions land on A
  const Tensor a = param("a", {4, 3});
  check(linear_loss(g_.matmul(a, a, true, false)));
}

// ---- add / sub / mul ----

TEST_F(OpGradient, AddSameShape) {
  const Tensor a = param("a", {3, 4});
  const Tensor b = param("b", {3, 4});
  check(linear_loss(g_.add(a, b)));
}

TEST_F(OpGradient, AddBiasBroadcast) {
  const Tensor a = param("a", {5, 4});
  const Tensor b = param("b", {4});
  check(linear_loss(g_.add(a, b)));
}

TEST_F(OpGradient, AddBiasBroadcast3D) {  // bias over the last extent of a 3-D tensor
  const Tensor a = param("a", {2, 3, 4});
  const Tensor b = param("b", {4});
  check(linear_loss(g_.add(a, b)));
}

TEST_F(OpGradient, Sub) {
  const Tensor a = param("a", {3, 4});
  const Tensor b = param("b", {3, 4});
  check(linear_loss(g_.sub(a, b)));
}

TEST_F(OpGradient, Mul) {
  const Tensor a = param("a", {3, 4});
  const Tensor b = param("b", {3, 4});
  check(linear_loss(g_.mul(a, b)));
}

TEST_F(OpGradient, MulSquare) {  // y = a * a: two contributions to one gradient, summed
  const Tensor a = param("a", {3, 4});
  check(linear_loss(g_.mul(a, a)));
}

// ---- elementwise nonlinearities ----

TEST_F(OpGradient, Sigmoid) {
  const Tensor x = param("x", {4, 5}, -2.0f, 2.0f);
  check(linear_loss(g_.sigmoid(x)));
}

TEST_F(OpGradient, Tanh) {
  const Tensor x = param("x", {4, 5}, -2.0f, 2.0f);
  check(linear_loss(g_.tanh(x)));
}

TEST_F(OpGradient, Relu) {
  const Tensor x = param("x", {4, 5});
  // Keep every element at least 0.1 away from the kink (the steps are 1e-2), with both signs present.
  float* d = g_.data(x);
  for (int e = 0; e < 20; ++e) d[e] = (e % 3 == 0 ? -1.0f : 1.0f) * (0.1f + 0.9f * std::abs(d[e]));
  check(linear_loss(g_.relu(x)));
}

TEST_F(OpGradient, LeakyRelu) {
  const Tensor x = param("x", {4, 5});
  float* d = g_.data(x);  // away from the kink, both signs present (as for relu)
  for (int e = 0; e < 20; ++e) d[e] = (e % 3 == 0 ? -1.0f : 1.0f) * (0.1f + 0.9f * std::abs(d[e]));
  check(linear_loss(g_.leaky_relu(x, 0.2f)));
}

TEST_F(OpGradient, LeakyReluTwoSlopesOnOneInput) {  // each node's gradient uses its own alpha
  const Tensor x = param("x", {3, 7});
  float* d = g_.data(x);
  for (int e = 0; e < 21; ++e) d[e] = (e % 2 == 0 ? -1.0f : 1.0f) * (0.1f + 0.9f * std::abs(d[e]));
  check(linear_loss(g_.add(g_.leaky_relu(x, 0.05f), g_.leaky_relu(x, -0.5f))));
}

TEST_F(OpGradient, Gelu) {  // smooth: wide inputs, including the tails where Phi saturates
  const Tensor x = param("x", {3, 7}, -4.0f, 4.0f);
  check(linear_loss(g_.gelu(x)));
}

TEST_F(OpGradient, GeluOfAMatmul) {  // the gradient reaches the matmul's operands through gelu
  const Tensor a = param("a", {3, 4});
  const Tensor b = param("b", {4, 2});
  check(linear_loss(g_.gelu(g_.matmul(a, b))));
}

// The hard activations are piecewise: inputs on a grid over [-5.3, 5.3] reach every piece and stay at least
// 0.15 from each kink (x = -3 and 3 for hard_swish and PyTorch's hard_sigmoid, -2.5 and 2.5 for ONNX's default,
// -3 and 1/3 for the negative slope), far beyond the step of 1e-2.
void fill_hard_grid(Graph& g, Tensor x) {
  float* d = g.data(x);
  for (int64_t e = 0; e < x.shape().numel(); ++e) d[e] = -5.3f + 0.53f * static_cast<float>(e % 21);
}

TEST_F(OpGradient, HardSigmoid) {  // PyTorch's 1/6, ONNX's default 0.2, and a negative slope on one input
  const Tensor x = param("x", {3, 7});
  fill_hard_grid(g_, x);
  check(linear_loss(g_.add(g_.add(g_.hard_sigmoid(x, 1.0f / 6.0f, 0.5f), g_.hard_sigmoid(x)),
                           g_.hard_sigmoid(x, -0.3f, 0.1f))));
}

TEST_F(OpGradient, HardSwish) {
  const Tensor x = param("x", {3, 7});
  fill_hard_grid(g_, x);
  check(linear_loss(g_.hard_swish(x)));
}

TEST_F(OpGradient, HardSwishOfAMatmul) {  // the gradient reaches the matmul's operands through hard_swish
  const Tensor a = param("a", {3, 4}, -2.0f, 2.0f);
  const Tensor b = param("b", {4, 2}, -2.0f, 2.0f);
  check(linear_loss(g_.hard_swish(g_.matmul(a, b))));
}

// ---- concat / split / slice ----

TEST_F(OpGradient, ConcatDim0TwoOperands) {
  const Tensor a = param("a", {2, 3});
  const Tensor b = param("b", {4, 3});
  const Tensor y = g_.concat({a, b}, 0);
  ASSERT_EQ(y.shape(), (Shape{6, 3}));
  check(linear_loss(y));
}

TEST_F(OpGradient, ConcatDim1ThreeOperands) {
  const Tensor a = param("a", {3, 2});
  const Tensor b = param("b", {3, 1});
  const Tensor c = param("c", {3, 4});
  const Tensor y = g_.concat({a, b, c}, 1);
  ASSERT_EQ(y.shape(), (Shape{3, 7}));
  check(linear_loss(y));
}

TEST_F(OpGradient, ConcatDim1Of3D) {
  const Tensor a = param("a", {2, 1, 3});
  const Tensor b = param("b", {2, 2, 3});
  const Tensor c = param("c", {2, 3, 3});
  check(linear_loss(g_.concat({a, b, c}, 1)));
}

TEST_F(OpGradient, ConcatSameOperandTwice) {
  const Tensor a = param("a", {2, 3});
  check(linear_loss(g_.concat({a, a}, 0)));
}

TEST_F(OpGradient, SplitDim1AllPiecesUsed) {
  const Tensor x = param("x", {3, 6});
  const auto ys = g_.split(x, 1, {2, 3, 1});
  ASSERT_EQ(ys.size(), 3u);
  const Tensor l = g_.add(g_.add(linear_loss(ys[0]), linear_loss(ys[1])), linear_loss(ys[2]));
  check(l);
}

TEST_F(OpGradient, SplitDim0OnePieceUnused) {  // the unused piece's gradient is a zero constant
  const Tensor x = param("x", {5, 3});
  const auto ys = g_.split(x, 0, {1, 3, 1});
  check(g_.add(linear_loss(ys[0]), linear_loss(ys[2])));
}

TEST_F(OpGradient, SliceDim0) {
  const Tensor x = param("x", {5, 4});
  const Tensor y = g_.slice(x, 0, 1, 3);
  ASSERT_EQ(y.shape(), (Shape{3, 4}));
  check(linear_loss(y));
}

TEST_F(OpGradient, SliceDim1) {
  const Tensor x = param("x", {4, 6});
  const Tensor y = g_.slice(x, 1, 2, 3);
  ASSERT_EQ(y.shape(), (Shape{4, 3}));
  check(linear_loss(y));
}

TEST_F(OpGradient, SliceDim1Of3DTwoSlices) {  // two slices of one value (LSTM-style gate blocks)
  const Tensor x = param("x", {2, 5, 3});
  check(g_.add(linear_loss(g_.slice(x, 1, 0, 2)), linear_loss(g_.slice(x, 1, 1, 4))));
}

// ---- sum ----

TEST_F(OpGradient, SumDim0) {
  const Tensor x = param("x", {4, 5});
  const Tensor y = g_.sum(x, 0);
  ASSERT_EQ(y.shape(), Shape{5});
  check(linear_loss(y));
}

TEST_F(OpGradient, SumDim1Scaled) {
  const Tensor x = param("x", {4, 5});
  const Tensor y = g_.sum(x, 1, 0.5f);
  ASSERT_EQ(y.shape(), Shape{4});
  check(linear_loss(y));
}

TEST_F(OpGradient, SumMiddleDimOf3D) {
  const Tensor x = param("x", {2, 3, 4});
  const Tensor y = g_.sum(x, 1, -1.5f);
  ASSERT_EQ(y.shape(), (Shape{2, 4}));
  check(linear_loss(y));
}

TEST_F(OpGradient, SumLastDimOf3D) {
  const Tensor x = param("x", {2, 3, 4});
  check(linear_loss(g_.sum(x, 2)));
}

TEST_F(OpGradient, Sum1D) {  // a 1-D sum gives [1]
  const Tensor x = param("x", {7});
  const Tensor y = g_.sum(x, 0, 2.0f);
  ASSERT_EQ(y.shape(), Shape{1});
  check(linear_loss(y));
}

}  // namespace
}  // namespace corun
