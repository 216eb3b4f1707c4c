// Graph::backward: its preconditions and the structure of successful builds.
#include <corun/error.hpp>
#include <corun/graph.hpp>
#include <corun/models/cnn.hpp>

#include "codelets/op.hpp"
#include "codelets/unary_math/unary_math.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/ops/rules.hpp"

#include "common/error_matchers.hpp"
#include "graph_test_mlp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Status;
using corun::Tensor;
using corun::ValueKind;
using corun::test::Mlp;

// --------------------------------------------------------------------------------------------- backward

TEST(Backward, LossMustBeScalar) {
  Mlp m;
  const int nodes = m.g.num_nodes();
  const int values = m.g.num_values();
  EXPECT_CORUN_ERROR(m.g.backward(m.logits), Status::invalid_argument, "backward", "'logits'", "[1]", "[8, 3]");
  // The failed call changed nothing: a correct call still works.
  EXPECT_EQ(m.g.num_nodes(), nodes);
  EXPECT_EQ(m.g.num_values(), values);
  m.g.backward(m.loss);
  EXPECT_GT(m.g.num_nodes(), nodes);
}

TEST(Backward, OnlyOnce) {
  Mlp m;
  m.g.backward(m.loss);
  const int nodes = m.g.num_nodes();
  EXPECT_CORUN_ERROR(m.g.backward(m.loss), Status::invalid_argument, "backward", "already");
  EXPECT_EQ(m.g.num_nodes(), nodes);
  // Parameters cannot be added afterwards.
  EXPECT_CORUN_ERROR(m.g.param("late", {2}), Status::invalid_argument, "'late'", "before backward");
}

TEST(Backward, LossMustDependOnParams) {
  Graph g;
  auto x = g.input("x", {4, 3});
  auto t = g.input("t", {4, 3});
  g.param("w", {3, 3});  // exists but unused
  auto loss = g.softmax_xent(x, t, "loss");
  const int nodes = g.num_nodes();
  EXPECT_CORUN_ERROR(g.backward(loss), Status::invalid_argument, "backward", "'loss'", "does not depend");
  EXPECT_EQ(g.num_nodes(), nodes);
}

TEST(Backward, LossFromAnotherGraphOrInvalid) {
  Mlp m;
  Graph other;
  auto p = other.param("p", {1});
  auto l = other.sum(p, 0, 1.0f, "l");
  EXPECT_CORUN_ERROR(m.g.backward(l), Status::invalid_argument, "backward", "not a tensor of this graph");
  EXPECT_CORUN_ERROR(m.g.backward(Tensor()), Status::invalid_argument, "backward");
}

TEST(Backward, NonPositiveLearningRate) {
  Mlp m;
  EXPECT_CORUN_ERROR(m.g.backward(m.loss, {.sgd_update = true, .learning_rate = 0.0f}), Status::invalid_argument,
                     "learning rate");
  m.g.backward(m.loss, {.sgd_update = true, .learning_rate = 0.25f});
  EXPECT_CORUN_ERROR(m.g.set_learning_rate(-1.0f), Status::invalid_argument, "learning rate");
}

// Occurrences of `prefix` in the DOT text (SGD update nodes are named "sgd.<param>").
int count_in_dot(const Graph& g, const std::string& prefix) {
  const std::string dot = g.dump_dot();
  int n = 0;
  for (size_t p = dot.find(prefix); p != std::string::npos; p = dot.find(prefix, p + 1)) ++n;
  return n;
}

TEST(Backward, SuccessfulBuild) {
  Mlp m;
  EXPECT_EQ(m.h.shape(), (Shape{8, 6}));
  EXPECT_EQ(m.logits.shape(), (Shape{8, 3}));
  EXPECT_EQ(m.loss.shape(), (Shape{1}));
  EXPECT_EQ(m.g.kind(m.loss), ValueKind::activation);
  EXPECT_EQ(m.g.kind(m.w), ValueKind::param);
  EXPECT_EQ(m.g.kind(m.x), ValueKind::input);
  EXPECT_EQ(m.g.params().size(), 4u);
  EXPECT_EQ(m.g.inputs().size(), 2u);
  // No gradients before backward().
  EXPECT_FALSE(m.g.grad(m.w).valid());

  const int forward_nodes = m.g.num_nodes();
  m.g.backward(m.loss, {.sgd_update = true, .learning_rate = 0.1f});
  for (Tensor p : m.g.params()) {
    const Tensor d = m.g.grad(p);
    ASSERT_TRUE(d.valid()) << p.name();
    EXPECT_EQ(d.shape(), p.shape()) << p.name();
    EXPECT_EQ(m.g.kind(d), ValueKind::gradient) << p.name();
  }
  // Inputs get no gradient; activations on the path do.
  EXPECT_FALSE(m.g.grad(m.x).valid());
  EXPECT_FALSE(m.g.grad(m.t).valid());
  EXPECT_TRUE(m.g.grad(m.h).valid());
  EXPECT_EQ(m.g.grad(m.h).shape(), m.h.shape());

  // One SGD node per parameter, all after the forward nodes.
  const auto& impl = m.g.impl();
  int sgd = 0;
  std::set<int> updated;
  for (int k = 0; k < m.g.num_nodes(); ++k) {
    const auto& n = impl.nodes[static_cast<size_t>(k)];
    EXPECT_EQ(n.is_gradient, k >= forward_nodes) << n.name;
    if (n.call.kind == corun::codelets::OpKind::sgd) {
      ++sgd;
      updated.insert(n.buffers[0]);
      EXPECT_FLOAT_EQ(n.call.f, 0.1f);
      EXPECT_EQ(n.name, "sgd." + m.g.value(n.buffers[0]).name());
    }
  }
  EXPECT_EQ(sgd, static_cast<int>(m.g.params().size()));
  for (Tensor p : m.g.params()) EXPECT_TRUE(updated.count(p.id())) << p.name();
  EXPECT_EQ(count_in_dot(m.g, "sgd."), 4);

  m.g.set_learning_rate(0.5f);
  for (const auto& n : impl.nodes) {
    if (n.call.kind == corun::codelets::OpKind::sgd) {
      EXPECT_FLOAT_EQ(n.call.f, 0.5f);
    }
  }
}

TEST(Backward, NoSgdWhenDisabledAndUnusedParamsGetNothing) {
  Graph g;
  auto x = g.input("x", {2, 3});
  auto t = g.input("t", {2, 4});
  auto w = g.param("w", {3, 4});
  auto unused = g.param("unused", {5});
  auto loss = g.softmax_xent(g.matmul(x, w), t, "loss");
  g.backward(loss, {.sgd_update = false});
  EXPECT_TRUE(g.grad(w).valid());
  EXPECT_FALSE(g.grad(unused).valid());
  for (const auto& n : g.impl().nodes) EXPECT_NE(n.call.kind, corun::codelets::OpKind::sgd) << n.name;

  Graph g2;
  auto x2 = g2.input("x", {2, 3});
  auto t2 = g2.input("t", {2, 4});
  auto w2 = g2.param("w", {3, 4});
  auto unused2 = g2.param("unused", {5});
  g2.backward(g2.softmax_xent(g2.matmul(x2, w2), t2, "loss"));
  int sgd = 0;
  for (const auto& n : g2.impl().nodes) sgd += n.call.kind == corun::codelets::OpKind::sgd;
  EXPECT_EQ(sgd, 1);  // only the parameter the loss depends on
  EXPECT_FALSE(g2.grad(unused2).valid());
}

TEST(Backward, EveryDifferentiableOpBuilds) {
  // One graph using every public op; backward must produce gradients of the right shape for all params.
  Graph g;
  auto x = g.input("x", {4, 6});
  auto t = g.input("t", {4, 3});
  auto w = g.param("w", {6, 8});
  auto b = g.param("b", {8});
  auto u = g.param("u", {4, 4});
  auto v = g.param("v", {8, 3});
  auto y = g.add(g.matmul(x, w), b);   // [4, 8]
  auto parts = g.split(y, 1, {4, 4});  // 2 x [4, 4]
  auto s = g.sigmoid(parts[0]);
  auto th = g.tanh(parts[1]);
  auto r = g.relu(g.sub(g.mul(s, th), u));           // [4, 4]
  auto cat = g.concat({r, g.slice(y, 1, 2, 4)}, 1);  // [4, 8]
  auto logits = g.matmul(cat, v);                    // [4, 3]
  auto loss = g.add(g.softmax_xent(logits, t), g.sum(g.sum(u, 0), 0, 0.01f));
  ASSERT_EQ(loss.shape(), (Shape{1}));
  g.backward(loss);
  for (Tensor p : g.params()) {
    ASSERT_TRUE(g.grad(p).valid()) << p.name();
    EXPECT_EQ(g.grad(p).shape(), p.shape()) << p.name();
  }
}

// lstm_cell's backward: one lstm_cell_grad per cell; a missing gradient of h or c is a zero constant; the
// cell state's gradient reaching the previous cell sums the next cell's and any direct use.
TEST(Backward, LstmCellGradientNodes) {
  Graph g;
  auto z1 = g.param("z1", {2, 8});
  auto z2 = g.param("z2", {2, 8});
  auto c0 = g.param("c0", {2, 2});
  auto t = g.input("t", {2, 2});
  const auto [h1, c1] = g.lstm_cell(z1, c0, "cell1");
  const auto [h2, c2] = g.lstm_cell(z2, c1, "cell2");
  (void)h1;
  (void)c2;  // c2 unused: cell2's backward gets a zero dC
  auto loss = g.add(g.softmax_xent(h2, t), g.sum(g.sum(c1, 0), 0));
  g.backward(loss, {.sgd_update = false});
  std::vector<const corun::detail::Node*> grads;
  for (const auto& n : g.impl().nodes)
    if (n.call.kind == corun::codelets::OpKind::lstm_cell_grad) grads.push_back(&n);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0]->name, "grad.cell2");  // reverse creation order
  const auto& vals = g.impl().values;
  EXPECT_EQ(vals[static_cast<size_t>(grads[0]->buffers[4])].kind, ValueKind::constant) << "dC of cell2";
  EXPECT_EQ(vals[static_cast<size_t>(grads[1]->buffers[4])].kind, ValueKind::gradient) << "dC of cell1";
  EXPECT_EQ(grads[1]->buffers[4], g.grad(c1).id());
  for (Tensor p : g.params()) {
    ASSERT_TRUE(g.grad(p).valid()) << p.name();
    EXPECT_EQ(g.grad(p).shape(), p.shape()) << p.name();
  }
}

// The registration is consistent: every op a builder makes (graph_rules in codelets/ops.def) has a shape rule
// and a backward rule, and no other op has rules.
TEST(Backward, EveryRegisteredOpHasItsRules) {
  using corun::codelets::OpKind;
  for (int k = 0; k < static_cast<int>(OpKind::count_); ++k) {
    const auto kind = static_cast<OpKind>(k);
    const corun::graphs::OpRules* rules = corun::graphs::op_rules(kind);
    const char* name = corun::codelets::op_info(kind).name;
    if (!corun::codelets::op_info(kind).graph_rules) {
      EXPECT_EQ(rules, nullptr) << name;
      continue;
    }
    ASSERT_NE(rules, nullptr) << name;
    EXPECT_NE(rules->shapes, nullptr) << name;
    EXPECT_NE(rules->backward, nullptr) << name;
  }
}

// leaky_relu and gelu: one gradient node each, reading the forward input X and dY; leaky_relu's carries
// its alpha.
TEST(Backward, LeakyReluAndGeluGradientNodes) {
  using corun::codelets::OpKind;
  Graph g;
  auto w = g.param("w", {3, 4});
  auto a = g.leaky_relu(w, 0.3f, "a");
  auto b = g.gelu(a, "b");
  g.backward(g.reduce_sum(b), {.sgd_update = false});
  const auto& impl = g.impl();
  std::map<OpKind, const corun::detail::Node*> grads;
  for (const auto& n : impl.nodes)
    if (n.is_gradient) grads[n.call.kind] = &n;
  ASSERT_TRUE(grads.count(OpKind::gelu_grad));
  ASSERT_TRUE(grads.count(OpKind::leaky_relu_grad));
  EXPECT_EQ(grads[OpKind::gelu_grad]->buffers[0], a.id());  // gelu's input
  EXPECT_EQ(grads[OpKind::leaky_relu_grad]->buffers[0], w.id());
  EXPECT_EQ(grads[OpKind::leaky_relu_grad]->call.f, 0.3f);
  EXPECT_EQ(g.grad(w).shape(), w.shape());
}

// hard_sigmoid and hard_swish: one gradient node each, reading the forward input X and dY; hard_sigmoid's
// carries its alpha and beta.
TEST(Backward, HardSigmoidAndHardSwishGradientNodes) {
  using corun::codelets::OpKind;
  Graph g;
  auto w = g.param("w", {3, 4});
  auto a = g.hard_sigmoid(w, 0.25f, 0.4f, "a");
  auto b = g.hard_swish(a, "b");
  g.backward(g.reduce_sum(b), {.sgd_update = false});
  std::map<OpKind, const corun::detail::Node*> grads;
  for (const auto& n : g.impl().nodes)
    if (n.is_gradient) grads[n.call.kind] = &n;
  ASSERT_TRUE(grads.count(OpKind::hard_swish_grad));
  ASSERT_TRUE(grads.count(OpKind::hard_sigmoid_grad));
  EXPECT_EQ(grads[OpKind::hard_swish_grad]->buffers[0], a.id());  // hard_swish's input
  EXPECT_EQ(grads[OpKind::hard_sigmoid_grad]->buffers[0], w.id());
  EXPECT_EQ(grads[OpKind::hard_sigmoid_grad]->call.i[0], corun::codelets::float_attr_bits(0.25f));
  EXPECT_EQ(grads[OpKind::hard_sigmoid_grad]->call.i[1], corun::codelets::float_attr_bits(0.4f));
  EXPECT_EQ(g.grad(w).shape(), w.shape());
}

}  // namespace

// A learning-rate schedule (corun train's warm-up) changes every update, also those the parallel-op pass
// moved into a group task (PathNet's module updates: CORUN_PARALLEL_OPS=on).
TEST(Backward, SetLearningRateReachesGroupedUpdates) {
  corun::models::CnnConfig cfg = corun::models::pathnet_config("small");
  cfg.batch = 2, cfg.image = 8, cfg.filters = 2, cfg.layers = 1;
  corun::models::Cnn m(cfg);
  ASSERT_GT(m.graph.group_parallel_ops(), 0);
  m.graph.set_learning_rate(0.25f);
  int updates = 0, grouped = 0;
  for (const auto& n : m.graph.impl().nodes) {
    if (n.call.kind == corun::codelets::OpKind::sgd_momentum) {
      EXPECT_FLOAT_EQ(n.call.f, 0.25f) << n.name;
      ++updates;
    }
    for (const auto& member : n.call.members)
      if (member.kind == corun::codelets::OpKind::sgd_momentum) {
        EXPECT_FLOAT_EQ(member.f, 0.25f) << n.name;
        ++grouped;
      }
  }
  EXPECT_GT(grouped, 0) << "the pass grouped no update: the test no longer tests groups";
  EXPECT_EQ(updates + grouped, static_cast<int>(m.graph.params().size()));
}
