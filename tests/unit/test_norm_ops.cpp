// Graph building of the normalisation ops (no numbers): batch_norm's and layer_norm's output shapes and
// names, the builders' errors, training-mode batch_norm's in-place running statistics (state, readwrite,
// one writer, listed by optimizer_state so checkpoints save them) and the gradient nodes.
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "common/error_matchers.hpp"
#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Status;
using corun::Tensor;
using corun::ValueKind;
using corun::codelets::Access;
using corun::codelets::OpKind;

struct Bn {
  Graph g;
  Tensor x, scale, bias, rm, rv;
  explicit Bn(const Shape& sx) {
    x = g.input("x", sx);
    scale = g.param("scale", {sx[1]});
    bias = g.param("bias", {sx[1]});
    rm = g.state("rm", {sx[1]});
    rv = g.state("rv", {sx[1]}, 1.0f);
  }
};

const corun::detail::Node& node_of(const Graph& g, OpKind kind) {
  for (const auto& n : g.impl().nodes)
    if (n.call.kind == kind) return n;
  throw std::runtime_error("no node of that kind");
}

TEST(NormOps, StateLeaf) {
  Graph g;
  const Tensor s = g.state("s", {3}, 1.5f);
  EXPECT_EQ(g.kind(s), ValueKind::state);
  for (int e = 0; e < 3; ++e) EXPECT_EQ(g.data(s)[e], 1.5f);
  ASSERT_EQ(g.optimizer_state().size(), 1u);
  EXPECT_EQ(g.optimizer_state()[0], s);
  EXPECT_CORUN_ERROR(g.state("s", {2}), Status::invalid_argument, "state 's'", "already used");
}

TEST(NormOps, BatchNormShapesNamesAndModes) {
  for (const Shape& sx : {Shape{8, 3}, Shape{2, 3, 5}, Shape{2, 3, 4, 4}}) {
    Bn b(sx);
    const Tensor y = b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, true, "bn");
    EXPECT_EQ(y.shape(), sx);
    EXPECT_EQ(y.name(), "bn");
    EXPECT_EQ(b.g.find("bn.mean").shape(), (Shape{3}));
    EXPECT_EQ(b.g.find("bn.invstd").shape(), (Shape{3}));
    const auto& n = node_of(b.g, OpKind::batch_norm);
    EXPECT_EQ(n.call.modes[3], Access::readwrite);
    EXPECT_EQ(n.call.modes[4], Access::readwrite);
    EXPECT_EQ(n.call.i[0], 1);
    EXPECT_EQ(b.g.optimizer_state().size(), 2u);  // the running statistics, saved by checkpoints
  }
  Bn b(Shape{4, 3, 2, 2});
  b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, false, "bn");
  const auto& n = node_of(b.g, OpKind::batch_norm);
  EXPECT_EQ(n.call.modes[3], Access::read);
  EXPECT_EQ(n.call.modes[4], Access::read);
}

TEST(NormOps, BatchNormErrors) {
  Bn b(Shape{4, 3, 2, 2});
  const Tensor wrong = b.g.param("wrong", {4});
  EXPECT_CORUN_ERROR(b.g.batch_norm(b.x, wrong, b.bias, b.rm, b.rv, 1e-5f, 0.9f, false, "bn1"),
                     Status::invalid_argument, "batch_norm 'bn1'", "scale must be [C]", "[4, 3, 2, 2]", "[4]");
  const Tensor flat = b.g.input("flat", {5});
  EXPECT_CORUN_ERROR(b.g.batch_norm(flat, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, false, "bn2"),
                     Status::invalid_argument, "batch_norm 'bn2'", "rank 2 to 4", "[5]");
  EXPECT_CORUN_ERROR(b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 1.5f, true, "bn3"),
                     Status::invalid_argument, "batch_norm 'bn3'", "momentum must be in [0, 1]", "1 - m");
  EXPECT_CORUN_ERROR(b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, -1.0f, 0.9f, true, "bn4"),
                     Status::invalid_argument, "batch_norm 'bn4'", "epsilon");
  const Tensor in = b.g.input("in_stats", {3});
  EXPECT_CORUN_ERROR(b.g.batch_norm(b.x, b.scale, b.bias, in, b.rv, 1e-5f, 0.9f, true, "bn5"), Status::invalid_argument,
                     "batch_norm 'bn5'", "running_mean 'in_stats'", "Graph::state");
  EXPECT_CORUN_ERROR(b.g.batch_norm(b.x, b.scale, b.bias, b.scale, b.rv, 1e-5f, 0.9f, false, "bn6"),
                     Status::invalid_argument, "batch_norm 'bn6'", "'scale' is a parameter");
  const Tensor one = b.g.input("one", {1, 3});
  EXPECT_CORUN_ERROR(b.g.batch_norm(one, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, true, "bn7"),
                     Status::invalid_argument, "batch_norm 'bn7'", "more than one value per channel", "[1, 3]");
  b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, true, "first");
  EXPECT_CORUN_ERROR(b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, true, "second"),
                     Status::invalid_argument, "batch_norm 'second'", "already updated by node 'first'");
  b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, false, "reader");  // reading them is fine
}

TEST(NormOps, LayerNormShapesAndErrors) {
  Graph g;
  const Tensor x = g.input("x", {2, 3, 4});
  const Tensor s34 = g.param("s34", {3, 4}), b34 = g.param("b34", {3, 4});
  const Tensor s4 = g.param("s4", {4}), b4 = g.param("b4", {4});
  EXPECT_EQ(g.layer_norm(x, s34, b34, 1, 1e-5f, "ln").shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(g.find("ln.mean").shape(), (Shape{2}));
  EXPECT_EQ(g.layer_norm(x, s4, b4, -1, 1e-5f, "ln_last").shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(g.find("ln_last.invstd").shape(), (Shape{6}));
  EXPECT_EQ(node_of(g, OpKind::layer_norm).call.i[0], 1);
  EXPECT_CORUN_ERROR(g.layer_norm(x, s4, b4, 1, 1e-5f, "ln1"), Status::invalid_argument, "layer_norm 'ln1'",
                     "scale must have the normalised shape", "[2, 3, 4]", "[4]");
  EXPECT_CORUN_ERROR(g.layer_norm(x, s4, b34, -1, 1e-5f, "ln2"), Status::invalid_argument, "layer_norm 'ln2'", "bias");
  EXPECT_CORUN_ERROR(g.layer_norm(x, s4, b4, 3, 1e-5f, "ln3"), Status::invalid_argument, "layer_norm 'ln3'",
                     "axis 3 is out of range", "rank 3");
}

TEST(NormOps, GradientNodes) {
  Bn b(Shape{4, 3, 2, 2});
  const Tensor y = b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, true, "bn");
  const Tensor s = b.g.param("s", {2, 2}), c = b.g.param("c", {2, 2});
  const Tensor z = b.g.layer_norm(y, s, c, 2, 1e-5f, "ln");
  b.g.backward(b.g.reduce_sum(z), {.momentum = 0.9f});
  int bn_grads = 0, ln_grads = 0;
  for (const auto& n : b.g.impl().nodes) {
    bn_grads += n.call.kind == OpKind::batch_norm_grad;
    ln_grads += n.call.kind == OpKind::layer_norm_grad;
  }
  EXPECT_EQ(bn_grads, 1);
  EXPECT_EQ(ln_grads, 1);
  for (Tensor p : b.g.params()) EXPECT_TRUE(b.g.grad(p).valid()) << p.name();
  EXPECT_FALSE(b.g.grad(b.rm).valid());
  // Running statistics and the four velocities: all saved by checkpoints.
  EXPECT_EQ(b.g.optimizer_state().size(), 6u);
}

TEST(NormOps, NoGradientThroughSavedStatistics) {
  Bn b(Shape{4, 3});
  b.g.batch_norm(b.x, b.scale, b.bias, b.rm, b.rv, 1e-5f, 0.9f, true, "bn");
  EXPECT_CORUN_ERROR(b.g.backward(b.g.reduce_sum(b.g.find("bn.invstd"))), Status::invalid_argument, "batch_norm 'bn'",
                     "mean or invstd");
}

// What fold_batch_norm leaves alone: a training batch_norm, a conv output read twice; after backward() it
// refuses (it would change trained weights). The folded weights are the formula's.
TEST(NormOps, FoldBatchNormRules) {
  const auto conv_bn = [](Graph& g, bool training, bool second_reader) {
    const Tensor x = g.input("x", {2, 2, 4, 4});
    const Tensor w = g.param("w", {3, 2, 3, 3}), b = g.param("b", {3});
    const Tensor scale = g.param("scale", {3}), bias = g.param("bias", {3});
    const Tensor rm = g.state("rm", {3}, 0.5f), rv = g.state("rv", {3}, 1.0f);
    for (int e = 0; e < 3; ++e) {
      g.data(scale)[e] = 2.0f;
      g.data(bias)[e] = 1.0f;
      g.data(b)[e] = 3.0f;
    }
    for (int64_t e = 0; e < w.shape().numel(); ++e) g.data(w)[e] = 1.0f;
    const Tensor c = g.conv2d(x, w, b, 1, 1, "conv");
    const Tensor y = g.batch_norm(c, scale, bias, rm, rv, 0.0f, 0.9f, training, "bn");
    return second_reader ? g.add(y, c) : y;
  };
  {
    Graph g;
    conv_bn(g, false, false);
    EXPECT_EQ(g.fold_batch_norm(), 1);
    // a = 2 / sqrt(1) = 2: W' = 2 W, b' = 2 (3 - 0.5) + 1.
    EXPECT_FLOAT_EQ(g.data(g.find("w"))[53], 2.0f);
    EXPECT_FLOAT_EQ(g.data(g.find("b"))[2], 6.0f);
    EXPECT_EQ(g.num_nodes(), 1);
  }
  for (const auto& [training, second] : {std::pair{true, false}, std::pair{false, true}}) {
    Graph g;
    conv_bn(g, training, second);
    const int nodes = g.num_nodes();
    EXPECT_EQ(g.fold_batch_norm(), 0);
    EXPECT_EQ(g.num_nodes(), nodes);
  }
  Graph g;
  g.backward(g.reduce_sum(conv_bn(g, false, false)), {.sgd_update = false});
  EXPECT_CORUN_ERROR(g.fold_batch_norm(), Status::invalid_argument, "fold_batch_norm", "inference graphs only");
}

}  // namespace
