// Builders of issue 19's broadcasting family: the shapes they give, which node kind they make (add, sub and
// mul keep their same-shape kinds, other shapes go through binary_bcast), the gradient nodes of a broadcast
// operand, and the errors naming the op, the node and the shapes.
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "codelets/broadcast/broadcast.hpp"
#include "codelets/op.hpp"
#include "graphs/graph_impl.hpp"

#include "common/error_matchers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Status;
using corun::Tensor;
using corun::codelets::OpKind;

// The kind of the node that wrote `t` (the last node added).
OpKind last_kind(const Graph& g) {
  return g.impl().nodes.back().call.kind;
}

TEST(Broadcast, ShapesFollowNumpy) {
  Graph g;
  const Tensor a = g.input("a", {2, 3, 4});
  const Tensor b = g.input("b", {3, 1});
  const Tensor s = g.input("s", {1});
  const Tensor m = g.input("m", {5, 7});
  const Tensor p = g.input("p", {4, 1, 6});
  const Tensor q = g.input("q", {1, 5, 1});
  EXPECT_EQ(g.add(a, b).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(last_kind(g), OpKind::binary_bcast);
  EXPECT_EQ(g.sub(s, m).shape(), (Shape{5, 7}));
  EXPECT_EQ(g.mul(p, q).shape(), (Shape{4, 5, 6}));
  EXPECT_EQ(g.div(q, p).shape(), (Shape{4, 5, 6}));
  EXPECT_EQ(g.pow(m, s).shape(), (Shape{5, 7}));
  EXPECT_EQ(g.impl().nodes.back().call.i[0], static_cast<int64_t>(corun::codelets::BinaryOp::pow));
}

TEST(Broadcast, SameShapesAndBiasKeepTheirKinds) {
  Graph g;
  const Tensor a = g.input("a", {4, 3});
  const Tensor c = g.input("c", {4, 3});
  const Tensor bias = g.input("bias", {3});
  g.add(a, c);
  EXPECT_EQ(last_kind(g), OpKind::add);
  g.add(a, bias);
  EXPECT_EQ(last_kind(g), OpKind::add);
  g.sub(a, c);
  EXPECT_EQ(last_kind(g), OpKind::sub);
  g.mul(a, c);
  EXPECT_EQ(last_kind(g), OpKind::mul);
  // The bias is not a special case for sub and mul, nor as add's first operand: binary_bcast.
  EXPECT_EQ(g.sub(a, bias).shape(), (Shape{4, 3}));
  EXPECT_EQ(last_kind(g), OpKind::binary_bcast);
  EXPECT_EQ(g.add(bias, a).shape(), (Shape{4, 3}));
  EXPECT_EQ(last_kind(g), OpKind::binary_bcast);
  g.div(a, c);  // div and pow have no same-shape kind
  EXPECT_EQ(last_kind(g), OpKind::binary_bcast);
}

TEST(Broadcast, IncompatibleShapesNameOpNodeAndShapes) {
  Graph g;
  const Tensor a = g.input("a", {4, 3});
  const Tensor b = g.input("b", {3, 4});
  const Tensor c = g.input("c", {2, 4, 1});
  EXPECT_CORUN_ERROR(g.div(a, b, "d"), Status::invalid_argument, "div", "'d'", "broadcast", "[4, 3]", "[3, 4]");
  EXPECT_CORUN_ERROR(g.pow(b, a, "p"), Status::invalid_argument, "pow", "'p'", "[3, 4]", "[4, 3]");
  EXPECT_CORUN_ERROR(g.mul(c, b, "m"), Status::invalid_argument, "mul", "'m'", "[2, 4, 1]", "[3, 4]");
  EXPECT_EQ(g.mul(c, a).shape(), (Shape{2, 4, 3}));  // the extent-1 last dim of c meets a's 3
}

TEST(Broadcast, GradientOfABroadcastOperandIsOneReducingNode) {
  Graph g;
  const Tensor a = g.param("a", {2, 3, 4});
  const Tensor b = g.param("b", {3, 1});
  const Tensor loss = g.reduce_sum(g.mul(a, b));
  g.backward(loss, {.sgd_update = false});
  const Tensor db = g.grad(b);
  ASSERT_TRUE(db.valid());
  EXPECT_EQ(db.shape(), (Shape{3, 1}));
  int grads = 0;
  for (const auto& n : g.impl().nodes)
    if (n.call.kind == OpKind::binary_bcast_grad) {
      ++grads;
      EXPECT_EQ(n.call.i[0], static_cast<int64_t>(corun::codelets::BinaryOp::mul));
    }
  EXPECT_EQ(grads, 2);  // dA (shape of A, nothing to sum) and dB (summed over dims 0 and 2)
}

TEST(UnaryMath, ShapesAndKinds) {
  Graph g;
  const Tensor x = g.input("x", {3, 5});
  const std::pair<Tensor, OpKind> made[] = {{g.sqrt(x), OpKind::sqrt},
                                            {g.erf(x), OpKind::erf},
                                            {g.exp(x), OpKind::exp},
                                            {g.log(x), OpKind::log},
                                            {g.neg(x), OpKind::neg},
                                            {g.abs(x), OpKind::abs},
                                            {g.reciprocal(x), OpKind::reciprocal},
                                            {g.clip(x, 0.0f, 6.0f), OpKind::clip}};
  int k = 0;
  for (const auto& [t, kind] : made) {
    EXPECT_EQ(t.shape(), (Shape{3, 5}));
    EXPECT_EQ(g.impl().nodes[static_cast<size_t>(k++)].call.kind, kind);
  }
  // Chainable (no attribute) except clip.
  for (const OpKind kind : {OpKind::sqrt, OpKind::erf_grad, OpKind::exp, OpKind::log_grad, OpKind::neg,
                            OpKind::abs_grad, OpKind::reciprocal_grad})
    EXPECT_GT(corun::codelets::op_info(kind).ew_arity, 0) << corun::codelets::op_info(kind).name;
  EXPECT_EQ(corun::codelets::op_info(OpKind::clip).ew_arity, 0);
}

TEST(UnaryMath, ClipBoundsMustBeNumbers) {
  Graph g;
  const Tensor x = g.input("x", {3});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_CORUN_ERROR(g.clip(x, nan, 6.0f, "c"), Status::invalid_argument, "clip", "'c'", "lo and hi", "inf");
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(g.clip(x, -inf, 6.0f).shape(), (Shape{3}));
}

TEST(ReduceAxes, OnnxShapes) {
  Graph g;
  const Tensor x = g.input("x", {2, 3, 4, 5});
  EXPECT_EQ(g.reduce_mean(x, {2, 3}, true).shape(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(g.reduce_mean(x, {-1, -2}, false).shape(), (Shape{2, 3}));
  EXPECT_EQ(g.reduce_sum_axes(x, {1}, false).shape(), (Shape{2, 4, 5}));
  EXPECT_EQ(g.reduce_sum_axes(x, {}, true).shape(), (Shape{1, 1, 1, 1}));  // empty axes: every axis
  EXPECT_EQ(g.reduce_sum_axes(x, {}, false).shape(), (Shape{1}));
  EXPECT_EQ(g.reduce_sum_axes(x, {0, 1, 2, 3}, false).shape(), (Shape{1}));
  // The mean's scale is 1 / (reduced element count); the mask holds the axes.
  g.reduce_mean(x, {0, -1}, false);
  const auto& call = g.impl().nodes.back().call;
  EXPECT_EQ(call.kind, OpKind::reduce_axes);
  EXPECT_EQ(call.i[0], 0b1001);
  EXPECT_FLOAT_EQ(call.f, 1.0f / 10.0f);
}

TEST(ReduceAxes, BadAxesNameTheNode) {
  Graph g;
  const Tensor x = g.input("x", {2, 3});
  EXPECT_CORUN_ERROR(g.reduce_mean(x, {2}, true, "r"), Status::invalid_argument, "reduce_axes", "'r'", "[2]", "[-2, 1]",
                     "[2, 3]");
  EXPECT_CORUN_ERROR(g.reduce_sum_axes(x, {1, -1}, true, "dup"), Status::invalid_argument, "'dup'", "distinct",
                     "[1, -1]");
}

}  // namespace
