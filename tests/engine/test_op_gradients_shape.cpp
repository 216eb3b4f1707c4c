// Finite-difference checks of the backward rules of the issue-19 shape ops (transpose, softmax,
// log_softmax, batch_matmul with broadcast batches and numpy's 1-D rules, dropout, gather) and of a small
// attention block composing them; fixture in op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace corun {
namespace {

using test::OpGradient;

TEST_F(OpGradient, Transpose4D) {  // the inverse permutation of (2, 0, 3, 1) is (1, 3, 0, 2)
  const Tensor x = param("x", {2, 3, 2, 3});
  check(linear_loss(g_.transpose(x, {2, 0, 3, 1})));
}

TEST_F(OpGradient, TransposeDefaultReverses) {
  const Tensor x = param("x", {3, 4, 2});
  check(linear_loss(g_.transpose(x, {})));
}

TEST_F(OpGradient, SoftmaxMiddleAxis) {
  const Tensor x = param("x", {2, 4, 3}, -2.0f, 2.0f);
  check(linear_loss(g_.softmax(x, 1)));
}

TEST_F(OpGradient, SoftmaxLastAxisNegative) {
  const Tensor x = param("x", {3, 5}, -3.0f, 3.0f);
  check(linear_loss(g_.softmax(x, -1)));
}

TEST_F(OpGradient, LogSoftmaxFirstAxis) {
  const Tensor x = param("x", {4, 3}, -2.0f, 2.0f);
  check(linear_loss(g_.log_softmax(x, 0)));
}

TEST_F(OpGradient, BatchMatmulAttentionShapes) {  // [B,H,S,D] x [B,H,D,S]
  const Tensor q = param("q", {2, 2, 3, 2});
  const Tensor k = param("k", {2, 2, 2, 3});
  check(linear_loss(g_.batch_matmul(q, k)));
}

TEST_F(OpGradient, BatchMatmulBroadcastBothSides) {  // both gradients sum over a broadcast batch dim
  const Tensor a = param("a", {2, 1, 3, 2});
  const Tensor b = param("b", {1, 3, 2, 2});
  check(linear_loss(g_.batch_matmul(a, b)));
}

TEST_F(OpGradient, BatchMatmulSharedWeight) {  // a 2-D B shared by every batch entry (a linear layer)
  const Tensor a = param("a", {3, 2, 4});
  const Tensor b = param("b", {4, 3});
  check(linear_loss(g_.batch_matmul(a, b)));
}

TEST_F(OpGradient, BatchMatmulVectorOperands) {  // numpy's 1-D rules: row vector times batched matrices
  const Tensor v = param("v", {3});
  const Tensor m = param("m", {2, 3, 4});
  check(linear_loss(g_.batch_matmul(v, m)));
}

TEST_F(OpGradient, DropoutTraining) {  // the backward's recomputed mask matches the forward's
  const Tensor x = param("x", {4, 5});
  const Tensor step = g_.input("step", {1});
  g_.data(step)[0] = 7.0f;
  check(linear_loss(g_.dropout(x, 0.4f, 99, true, step)));
}

TEST_F(OpGradient, GatherAxis1RepeatedIndices) {  // index 2 twice (scatter-add), -1 = the last row
  const Tensor x = param("x", {2, 4, 3});
  const Tensor idx = g_.input("idx", {4});
  const float ids[] = {2, 0, 2, -1};
  std::copy(ids, ids + 4, g_.data(idx));
  check(linear_loss(g_.gather(x, idx, 1)));
}

TEST_F(OpGradient, GatherScalarIndexPicksATimeStep) {
  const Tensor x = param("x", {3, 4, 2});
  const Tensor idx = g_.input("idx", {1});
  g_.data(idx)[0] = 2.0f;
  check(linear_loss(g_.gather(x, idx, 1, true)));
}

TEST_F(OpGradient, AttentionBlock) {                    // softmax(Q K^T / sqrt d) V, heads transposed in and out
  const Tensor x = param("x", {2, 3, 4}, -0.5f, 0.5f);  // [B, S, H*D], H = 2, D = 2
  const Tensor heads = g_.transpose(g_.reshape(x, {2, 3, 2, 2}), {0, 2, 1, 3});  // [B, H, S, D]
  const Tensor kt = g_.transpose(heads, {0, 1, 3, 2});
  const Tensor p = g_.softmax(g_.batch_matmul(heads, kt), -1);
  const Tensor o = g_.transpose(g_.batch_matmul(p, heads), {0, 2, 1, 3});
  check(linear_loss(g_.reshape(o, {2, 3, 4})));
}

}  // namespace
}  // namespace corun
