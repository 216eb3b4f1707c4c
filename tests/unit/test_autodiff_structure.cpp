// Structure of the gradient graph (no numbers): a weight used at several timesteps gets its gradient
// accumulated in place by matmul nodes with the accumulate flag, in a fixed order; building the same graph
// twice gives identical node lists.
#include <corun/error.hpp>
#include <corun/graph.hpp>
#include <corun/models/lstm.hpp>

#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using corun::BackwardOptions;
using corun::Graph;
using corun::Shape;
using corun::Tensor;
using corun::codelets::Access;
using corun::codelets::OpKind;

// An LSTM-like recurrence sharing one weight over T steps: h_t = tanh([x_t, h_{t-1}] W + b).
struct Recurrence {
  Graph g;
  Tensor w, b, loss;
  std::vector<Tensor> xh;  // the concat of each step (the A operand of that step's matmul)
  explicit Recurrence(int steps, int64_t stack_rows = 0, int64_t batch = 4, int64_t in = 3, int64_t hidden = 5) {
    auto t = g.input("t", {batch, hidden});
    w = g.param("w", {in + hidden, hidden});
    b = g.param("b", {hidden});
    Tensor h = g.input("h0", {batch, hidden});
    for (int s = 0; s < steps; ++s) {
      const std::string id = std::to_string(s);
      auto x = g.input("x" + id, {batch, in});
      xh.push_back(g.concat({x, h}, 1, "xh" + id));
      h = g.tanh(g.add(g.matmul(xh.back(), w, false, false, "mm" + id), b, "pre" + id), "h" + id);
    }
    loss = g.softmax_xent(h, t, "loss");
    BackwardOptions o;
    o.stack_weight_gradient_rows = stack_rows;
    g.backward(loss, o);
  }
};

struct MatmulGradNodes {
  std::vector<int> accumulate;  // node indices with i[2] == 1
  std::vector<int> fresh;       // node indices with i[2] == 0
};

// The gradient matmul nodes whose output buffer is `value`.
MatmulGradNodes matmul_grads_writing(const Graph& g, int value) {
  MatmulGradNodes r;
  const auto& nodes = g.impl().nodes;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const auto& n = nodes[k];
    if (!n.is_gradient || n.call.kind != OpKind::matmul || n.buffers.back() != value) continue;
    (n.call.i[2] == 1 ? r.accumulate : r.fresh).push_back(static_cast<int>(k));
  }
  return r;
}

TEST(AutodiffStructure, SharedWeightGradientAccumulatesInPlace) {
  constexpr int kSteps = 6;
  Recurrence r(kSteps);
  const Tensor dw = r.g.grad(r.w);
  ASSERT_TRUE(dw.valid());
  EXPECT_EQ(dw.shape(), r.w.shape());

  const auto mm = matmul_grads_writing(r.g, dw.id());
  // One fresh product (the first contribution) and kSteps - 1 in-place accumulations into the same value.
  ASSERT_EQ(mm.fresh.size(), 1u);
  ASSERT_EQ(mm.accumulate.size(), static_cast<size_t>(kSteps - 1));
  const auto& nodes = r.g.impl().nodes;
  EXPECT_EQ(nodes[static_cast<size_t>(mm.fresh[0])].call.modes.back(), Access::write);
  for (int k : mm.accumulate) {
    const auto& n = nodes[static_cast<size_t>(k)];
    EXPECT_EQ(n.call.modes.back(), Access::readwrite) << n.name;
    EXPECT_EQ(n.call.shapes.back(), r.w.shape()) << n.name;
    EXPECT_GT(k, mm.fresh[0]) << "the fresh product must come first";
  }
  // No temporary per timestep: no gradient add node writes or reads an accumulation of dW.
  for (const auto& n : nodes) {
    if (!n.is_gradient || n.call.kind != OpKind::add) continue;
    EXPECT_EQ(n.name.find("grad_acc.w."), std::string::npos) << n.name;
  }
  // dW = sum_t xh_t^T dpre_t: every contribution reads a step's xh transposed, in reverse step order (the
  // reverse of the order the uses were added).
  std::vector<int> order{mm.fresh[0]};
  order.insert(order.end(), mm.accumulate.begin(), mm.accumulate.end());
  for (size_t j = 0; j < order.size(); ++j) {
    const auto& n = nodes[static_cast<size_t>(order[j])];
    EXPECT_EQ(n.call.i[0], 1) << n.name << ": A operand transposed";
    EXPECT_EQ(n.call.i[1], 0) << n.name;
    EXPECT_EQ(n.buffers[0], r.xh[static_cast<size_t>(kSteps - 1) - j].id()) << n.name;
  }
  // The SGD update reads the accumulated gradient.
  int sgd_reads = 0;
  for (const auto& n : nodes)
    if (n.call.kind == OpKind::sgd && n.buffers[0] == r.w.id()) {
      EXPECT_EQ(n.buffers[1], dw.id());
      ++sgd_reads;
    }
  EXPECT_EQ(sgd_reads, 1);
}

// With stacking, dW = sum_t xh_t^T dpre_t is made in groups of steps: each group one concat of its xh_t, one
// of its dpre_t (in the order the backward made them: reverse step order), and one product over the stacked
// rows; the first group writes dW, the others accumulate into it. A last lone step stays one product.
TEST(AutodiffStructure, StackedWeightGradientIsOneProductPerGroupOfSteps) {
  constexpr int kSteps = 7, kBatch = 4;
  Recurrence r(kSteps, /*stack_rows=*/3 * kBatch);  // groups of 3 steps: 3, 3, then 1 alone
  const Tensor dw = r.g.grad(r.w);
  const auto mm = matmul_grads_writing(r.g, dw.id());
  ASSERT_EQ(mm.fresh.size(), 1u);
  ASSERT_EQ(mm.accumulate.size(), 2u);
  const auto& g = r.g.impl();
  std::vector<int> order{mm.fresh[0]};
  order.insert(order.end(), mm.accumulate.begin(), mm.accumulate.end());
  int next_step = kSteps - 1;
  for (size_t j = 0; j < order.size(); ++j) {
    const auto& n = g.nodes[static_cast<size_t>(order[j])];
    EXPECT_EQ(n.call.i[0], 1) << n.name;
    EXPECT_EQ(n.call.i[1], 0) << n.name;
    const int a = n.buffers[0];
    if (j == 2) {  // the lone last step: its own xh, no concat
      EXPECT_EQ(a, r.xh[0].id()) << n.name;
      continue;
    }
    EXPECT_EQ(g.values[static_cast<size_t>(a)].shape, (Shape{3 * kBatch, r.xh[0].shape()[1]})) << n.name;
    const auto& cat = g.nodes[static_cast<size_t>(g.values[static_cast<size_t>(a)].producer)];
    ASSERT_EQ(cat.call.kind, OpKind::concat) << cat.name;
    EXPECT_EQ(cat.call.i[0], 0) << cat.name;
    ASSERT_EQ(cat.buffers.size(), 4u) << cat.name;
    for (int k = 0; k < 3; ++k, --next_step) EXPECT_EQ(cat.buffers[static_cast<size_t>(k)], r.xh[static_cast<size_t>(next_step)].id());
  }
  EXPECT_EQ(next_step, 0);
}

TEST(AutodiffStructure, StackingLeavesALoneContributionAlone) {
  Recurrence once(1, /*stack_rows=*/256), off(1, 0);
  EXPECT_EQ(once.g.impl().nodes.size(), off.g.impl().nodes.size());
  for (const auto& n : once.g.impl().nodes) EXPECT_EQ(n.name.find("grad_stack."), std::string::npos) << n.name;
}

TEST(AutodiffStructure, NegativeStackRowsAreRefused) {
  Graph g;
  const Tensor w = g.param("w", {2, 2});
  const Tensor loss = g.reduce_sum(g.matmul(g.input("x", {1, 2}), w));
  BackwardOptions o;
  o.stack_weight_gradient_rows = -1;
  EXPECT_THROW(g.backward(loss, o), corun::Error);
}

TEST(AutodiffStructure, SingleUseWeightHasNoAccumulation) {
  Recurrence r(1);
  const auto mm = matmul_grads_writing(r.g, r.g.grad(r.w).id());
  EXPECT_EQ(mm.fresh.size(), 1u);
  EXPECT_TRUE(mm.accumulate.empty());
}

TEST(AutodiffStructure, LstmWeightsAccumulateOverTimesteps) {
  corun::models::LstmConfig cfg;
  cfg.layers = 2;
  cfg.batch = 3;
  cfg.seq = 5;
  cfg.hidden = 4;
  cfg.input = 4;
  cfg.classes = 3;
  cfg.optimizer.stack_weight_gradient_rows = 0;  // one product per step (the stacked form: next test)
  corun::models::Lstm m(cfg);
  for (int l = 0; l < cfg.layers; ++l) {
    const Tensor w = m.graph.find("w" + std::to_string(l));
    const Tensor dw = m.graph.grad(w);
    ASSERT_TRUE(dw.valid());
    const auto mm = matmul_grads_writing(m.graph, dw.id());
    EXPECT_EQ(mm.fresh.size(), 1u) << w.name();
    EXPECT_EQ(mm.accumulate.size(), static_cast<size_t>(cfg.seq - 1)) << w.name();
  }
  // w_out is used once.
  const auto out = matmul_grads_writing(m.graph, m.graph.grad(m.graph.find("w_out")).id());
  EXPECT_EQ(out.fresh.size(), 1u);
  EXPECT_TRUE(out.accumulate.empty());
}

TEST(LstmModel, ConfigsAndParameterShapes) {
  const auto small = corun::models::lstm_config("small");
  EXPECT_EQ(small.layers, 4);
  EXPECT_EQ(small.batch, 64);
  EXPECT_EQ(small.seq, 20);
  EXPECT_EQ(small.hidden, 128);
  EXPECT_EQ(small.input, 128);
  EXPECT_EQ(corun::models::lstm_config("medium").hidden, 512);
  EXPECT_EQ(corun::models::lstm_config("large").seq, 40);
  try {
    corun::models::lstm_config("huge");
    ADD_FAILURE() << "no error for an unknown size";
  } catch (const corun::Error& e) {
    EXPECT_EQ(e.status(), corun::Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'huge'"), std::string::npos) << e.what();
  }
  corun::models::LstmConfig bad;
  bad.layers = 0;
  EXPECT_THROW(corun::models::Lstm{bad}, corun::Error);

  corun::models::LstmConfig cfg;
  cfg.layers = 2;
  cfg.batch = 3;
  cfg.seq = 2;
  cfg.hidden = 5;
  cfg.input = 7;
  cfg.classes = 4;
  corun::models::Lstm m(cfg);
  EXPECT_EQ(m.graph.find("w0").shape(), (Shape{12, 20}));
  EXPECT_EQ(m.graph.find("b0").shape(), (Shape{20}));
  EXPECT_EQ(m.graph.find("w1").shape(), (Shape{10, 20}));
  EXPECT_EQ(m.graph.find("w_out").shape(), (Shape{5, 4}));
  EXPECT_EQ(m.graph.find("b_out").shape(), (Shape{4}));
  EXPECT_EQ(m.graph.params().size(), 6u);
  ASSERT_EQ(m.x.size(), 2u);
  EXPECT_EQ(m.x[0].shape(), (Shape{3, 7}));
  EXPECT_EQ(m.targets.shape(), (Shape{3, 4}));
  EXPECT_EQ(m.logits.shape(), (Shape{3, 4}));
  EXPECT_EQ(m.loss.shape(), (Shape{1}));
  for (Tensor p : m.graph.params()) EXPECT_TRUE(m.graph.grad(p).valid()) << p.name();

  corun::models::Lstm inference(cfg, false);
  for (Tensor p : inference.graph.params()) EXPECT_FALSE(inference.graph.grad(p).valid()) << p.name();
  for (const auto& n : inference.graph.impl().nodes) EXPECT_FALSE(n.is_gradient) << n.name;
}

// Everything that defines a graph's behaviour, for comparing two builds.
void expect_same_graph(const Graph& a, const Graph& b) {
  const auto& ia = a.impl();
  const auto& ib = b.impl();
  ASSERT_EQ(ia.values.size(), ib.values.size());
  ASSERT_EQ(ia.nodes.size(), ib.nodes.size());
  for (size_t v = 0; v < ia.values.size(); ++v) {
    EXPECT_EQ(ia.values[v].name, ib.values[v].name) << "value " << v;
    EXPECT_EQ(ia.values[v].shape, ib.values[v].shape) << "value " << v;
    EXPECT_EQ(ia.values[v].kind, ib.values[v].kind) << "value " << v;
    EXPECT_EQ(ia.values[v].producer, ib.values[v].producer) << "value " << v;
    EXPECT_EQ(ia.grad_of[v], ib.grad_of[v]) << "value " << v;
  }
  for (size_t k = 0; k < ia.nodes.size(); ++k) {
    const auto& na = ia.nodes[k];
    const auto& nb = ib.nodes[k];
    EXPECT_EQ(na.name, nb.name) << "node " << k;
    EXPECT_EQ(na.call.kind, nb.call.kind) << na.name;
    EXPECT_EQ(na.buffers, nb.buffers) << na.name;
    EXPECT_EQ(na.call.modes, nb.call.modes) << na.name;
    EXPECT_EQ(na.call.shapes, nb.call.shapes) << na.name;
    EXPECT_EQ(na.call.i, nb.call.i) << na.name;
    EXPECT_EQ(na.call.f, nb.call.f) << na.name;
    EXPECT_EQ(na.is_gradient, nb.is_gradient) << na.name;
  }
  EXPECT_EQ(a.dump_dot(), b.dump_dot());
}

TEST(AutodiffStructure, BuildingTwiceGivesIdenticalGraphs) {
  Recurrence r1(4), r2(4);
  expect_same_graph(r1.g, r2.g);

  corun::models::LstmConfig cfg;
  cfg.layers = 2;
  cfg.batch = 2;
  cfg.seq = 4;
  cfg.hidden = 3;
  cfg.input = 3;
  cfg.classes = 2;
  corun::models::Lstm m1(cfg), m2(cfg);
  expect_same_graph(m1.graph, m2.graph);
}

TEST(AutodiffStructure, ValueUsedTwiceSumsInReverseUseOrder) {
  // y = sigmoid(a) used by two consumers: grad(y) = d(second use) + d(first use), summed by one add node
  // whose first operand is the contribution of the later use.
  Graph g;
  auto x = g.input("x", {2, 3});
  auto t = g.input("t", {2, 3});
  auto w = g.param("w", {3, 3});
  auto y = g.sigmoid(g.matmul(x, w, false, false, "xw"), "y");
  auto u1 = g.tanh(y, "use1");
  auto u2 = g.relu(y, "use2");
  auto loss = g.softmax_xent(g.add(u1, u2, "both"), t, "loss");
  g.backward(loss, {.sgd_update = false});
  const auto& impl = g.impl();
  const int dy = g.grad(y).id();
  int adds = 0;
  for (const auto& n : impl.nodes) {
    if (!n.is_gradient || n.buffers.back() != dy) continue;
    ASSERT_EQ(n.call.kind, OpKind::add) << n.name;
    ++adds;
    // Operand 0 is the accumulated gradient so far (from use2, visited first), operand 1 from use1.
    const int first = n.buffers[0], second = n.buffers[1];
    int from_use2 = -1, from_use1 = -1;
    for (size_t k = 0; k < impl.nodes.size(); ++k) {
      const auto& p = impl.nodes[k];
      if (p.name == "grad.use2" && p.buffers.back() == first) from_use2 = static_cast<int>(k);
      if (p.name == "grad.use1" && p.buffers.back() == second) from_use1 = static_cast<int>(k);
    }
    EXPECT_GE(from_use2, 0);
    EXPECT_GE(from_use1, 0);
    EXPECT_LT(from_use2, from_use1) << "use2 (added last) is differentiated first";
  }
  EXPECT_EQ(adds, 1);
}

}  // namespace
