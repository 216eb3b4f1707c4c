// The input-projection pass (graphs/passes/stack_input_projections.hpp, include/corun/input_projection.hpp,
// issue 18 item 2): the graph before and after in both forms, inputs that depend on the recurrence left
// alone, results equal to the pass off within float rounding (losses, gradients, SGD updates), gradients
// of the stacked graph against finite differences, the cost model's decisions and CORUN_INPUT_PROJECTION.
// Graphs run inline (no StarPU), so this is a unit test.
#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/inline.hpp>
#include <corun/input_projection.hpp>
#include <corun/models/lstm.hpp>

#include "graphs/graph_impl.hpp"
#include "graphs/passes/stack_input_projections.hpp"
#include "lstm_inline_training.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace corun {
namespace {

using codelets::OpKind;

int count(const Graph& g, OpKind kind, bool forward_only = true) {
  int n = 0;
  for (const auto& node : g.impl().nodes)
    if (node.call.kind == kind && !(forward_only && node.is_gradient)) ++n;
  return n;
}

// A plain RNN with split weights: h_t = tanh(x_t Wx + h_{t-1} Wh + b), loss on the last h.
struct PlainRnn {
  Graph g;
  std::vector<Tensor> xs;
  Tensor targets, loss;
  PlainRnn(int steps, bool stack, bool feed_back = false) {
    const int64_t B = 3, I = 5, H = 4;
    const Tensor wx = g.param("wx", {I, H}), wh = g.param("wh", {H, H}), b = g.param("b", {H});
    Tensor h = g.input("h0", {B, H});
    targets = g.input("targets", {B, H});
    for (int t = 0; t < steps; ++t) {
      // feed_back: x_t = h_{t-1} padded by the input: the input now depends on the recurrence.
      const Tensor x = feed_back && t > 0 ? g.concat({h, g.input("pad" + std::to_string(t), {B, I - H})}, 1)
                                          : g.input("x" + std::to_string(t), {B, I});
      xs.push_back(x);
      h = g.tanh(g.add(g.add(g.matmul(x, wx), g.matmul(h, wh)), b));
    }
    loss = g.softmax_xent(h, targets, "loss");
    if (stack) passes::stack_input_projections(g, nullptr);
    // The weight-gradient stacking of backward() off: these tests see what the input-projection pass stacks.
    g.backward(loss, {.sgd_update = false, .stack_weight_gradient_rows = 0});
  }
};

void fill(Graph& g, Tensor t, float scale, int seed) {
  float* d = g.data(t);
  for (int64_t e = 0; e < t.shape().numel(); ++e) d[e] = scale * std::sin(0.7f * static_cast<float>(e + 13 * seed));
}

TEST(InputProjection, PlainFormOneStackedGemmPerWeight) {
  PlainRnn off(6, false), on(6, true);
  EXPECT_EQ(count(off.g, OpKind::matmul), 12);
  EXPECT_EQ(count(on.g, OpKind::matmul), 7);  // one stacked x Wx, six h Wh
  EXPECT_EQ(count(on.g, OpKind::concat), 1);
  EXPECT_EQ(count(on.g, OpKind::split), 1);
  // The backward is stacked too: dWx is one X^T dY GEMM, dX one dY Wx^T GEMM (off: 6 each).
  EXPECT_LT(count(on.g, OpKind::matmul, false) - 7, count(off.g, OpKind::matmul, false) - 12);
}

TEST(InputProjection, InputsThatDependOnTheRecurrenceAreLeftAlone) {
  PlainRnn fed_back(5, /*stack=*/true, /*feed_back=*/true);  // x_t = [h_{t-1}, pad_t] for t > 0
  EXPECT_EQ(count(fed_back.g, OpKind::matmul), 10);
  Graph probe;  // h_t = tanh(h_{t-1} W): W's inputs are all made by the recurrence
  const Tensor w = probe.param("w", {3, 3});
  Tensor x = probe.input("x0", {2, 3});
  for (int t = 0; t < 4; ++t) x = probe.tanh(probe.matmul(x, w));
  EXPECT_TRUE(passes::stack_input_projections(probe, nullptr).empty());
  EXPECT_EQ(count(probe, OpKind::matmul), 4);
}

std::vector<std::vector<float>> run_plain(PlainRnn& m) {
  for (size_t t = 0; t < m.xs.size(); ++t)
    if (m.g.impl().values[static_cast<size_t>(m.xs[t].id())].kind == ValueKind::input) fill(m.g, m.xs[t], 1.0f, static_cast<int>(t));
  fill(m.g, m.targets, 0.0f, 0);
  m.g.data(m.targets)[1] = m.g.data(m.targets)[4] = m.g.data(m.targets)[11] = 1.0f;
  for (Tensor p : m.g.params()) fill(m.g, p, 0.4f, static_cast<int>(p.shape().numel()));
  InlineRunner(m.g).run();
  std::vector<std::vector<float>> out{{m.g.data(m.loss)[0]}};
  for (Tensor p : m.g.params()) {
    const Tensor gp = m.g.grad(p);
    out.emplace_back(m.g.data(gp), m.g.data(gp) + gp.shape().numel());
  }
  return out;
}

void expect_close(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (size_t e = 0; e < a[i].size(); ++e)
      EXPECT_NEAR(a[i][e], b[i][e], tol * (1.0 + std::fabs(b[i][e]))) << "tensor " << i << " element " << e;
  }
}

TEST(InputProjection, PlainFormSameLossAndGradientsWithinRounding) {
  PlainRnn off(6, false), on(6, true);
  expect_close(run_plain(on), run_plain(off), 1e-5);
}

TEST(InputProjection, StackedGradientsMatchFiniteDifferences) {
  PlainRnn on(4, true);
  const std::vector<std::vector<float>> base = run_plain(on);
  // Gradient of wx (params in creation order: wx, wh, b) at a few elements, central differences in float.
  const Tensor wx = on.g.find("wx");
  for (int e : {0, 7, 19}) {
    auto loss_at = [&](float delta) {
      PlainRnn m(4, true);
      run_plain(m);  // same data and parameters
      m.g.data(m.g.find("wx"))[e] += delta;
      InlineRunner(m.g).run();
      return static_cast<double>(m.g.data(m.loss)[0]);
    };
    const double eps = 1e-2, fd = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
    EXPECT_NEAR(base[1][static_cast<size_t>(e)], fd, 2e-3 + 1e-2 * std::fabs(fd)) << "wx element " << e;
  }
  (void)wx;
}

models::LstmConfig tiny_lstm(bool stack) {
  models::LstmConfig c = models::lstm_config("small");
  c.layers = 2, c.batch = 3, c.seq = 5, c.hidden = 6, c.input = 6, c.classes = 4;
  if (stack) c.before_backward = [](Graph& g) { passes::stack_input_projections(g, nullptr); };
  return c;
}

TEST(InputProjection, LstmConcatFormSplitsTheWeightAndTrainsTheSame) {
  models::Lstm off(tiny_lstm(false)), on(tiny_lstm(true));
  // Off: per layer and step a concat [x_t, h] and one matmul; plus the output layer's matmul.
  EXPECT_EQ(count(off.graph, OpKind::concat), 10);
  EXPECT_EQ(count(off.graph, OpKind::matmul), 11);
  // On: per layer one W split, one stacked concat, one stacked GEMM, one result split; per step h W_h.
  EXPECT_EQ(count(on.graph, OpKind::concat), 2);
  EXPECT_EQ(count(on.graph, OpKind::matmul), 2 + 10 + 1);
  EXPECT_EQ(count(on.graph, OpKind::split), 4);
  expect_close(test::train_lstm_inline(on, 3), test::train_lstm_inline(off, 3), 1e-5);
}

TEST(InputProjection, InnerLayersInputsAreStaggered) {
  // Layer 0 reads graph inputs; layer 1 reads layer 0's h_t, made one step at a time.
  models::LstmConfig c = tiny_lstm(false);
  std::vector<passes::ProjectionGroup> seen;
  c.before_backward = [&](Graph& g) {
    passes::stack_input_projections(g, [&](const passes::ProjectionGroup& grp) {
      seen.push_back(grp);
      return false;
    });
  };
  models::Lstm m(c);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].weight, "w0");
  EXPECT_FALSE(seen[0].staggered_inputs);
  EXPECT_TRUE(seen[1].staggered_inputs);
  EXPECT_TRUE(seen[1].concat_form);
  EXPECT_EQ(seen[1].steps, 5);
  EXPECT_EQ(count(m.graph, OpKind::concat), 10);  // nothing accepted: the graph as built
}

TEST(InputProjection, RefusedAfterBackward) {
  models::Lstm m(tiny_lstm(false));
  EXPECT_THROW(passes::stack_input_projections(m.graph, nullptr), Error);
}

TEST(InputProjection, CostModelStacksTheLstmShapesAndNotWhereNothingIsSaved) {
  const InputProjectionModel p;
  for (int h : {128, 512, 1024}) {  // the built-in LSTM's sizes (batch 64), concat form
    const auto d = predict_input_projection("w", 20, 64, h, h, 4 * h, p);
    EXPECT_TRUE(d.applied) << d.reason;
  }
  // Two steps whose input part is one column: stacking saves almost nothing and copies W every step.
  const auto d = predict_input_projection("w", 2, 64, 1, 1024, 4096, p);
  EXPECT_FALSE(d.applied) << d.reason;
  EXPECT_GT(d.stacked_us, 0.95 * d.separate_us);
  // An inner layer: never under auto, whatever the GEMMs would save (the overlap across layers is lost).
  const auto inner = predict_input_projection("w1", 30, 64, 512, 512, 2048, p, /*staggered_inputs=*/true);
  EXPECT_FALSE(inner.applied) << inner.reason;
  EXPECT_LT(inner.stacked_us, inner.separate_us);
}

TEST(InputProjection, ConfigOnOffAuto) {
  Config off, on, automatic;
  off.input_projection = false;
  on.input_projection = true;
  PlainRnn a(3, false);  // already has backward: the pass is refused, but off never looks at the graph
  EXPECT_TRUE(plan_input_projections(a.g, off).empty());
  // An inference graph (no backward): auto stacks where the model predicts a gain, on everywhere.
  auto forward = [] {
    auto g = std::make_unique<Graph>();
    const Tensor w = g->param("w", {1, 4096});
    for (int t = 0; t < 2; ++t) g->tanh(g->matmul(g->input("x" + std::to_string(t), {64, 1}), w));
    return g;
  };
  InputProjectionModel slow_copies;
  slow_copies.copy_gbs = 0.001;  // copies dominate: stacking two steps cannot pay
  auto g1 = forward(), g2 = forward();
  const auto d_auto = plan_input_projections(*g1, automatic, slow_copies);
  ASSERT_EQ(d_auto.size(), 1u);
  EXPECT_FALSE(d_auto[0].applied) << d_auto[0].reason;
  EXPECT_EQ(count(*g1, OpKind::matmul), 2);
  const auto d_on = plan_input_projections(*g2, on, slow_copies);
  ASSERT_EQ(d_on.size(), 1u);
  EXPECT_TRUE(d_on[0].applied);
  EXPECT_EQ(count(*g2, OpKind::matmul), 1);
}

// The plan step's pass (issue 50 item 2): run by apply_graph_passes on the graph the engine gets, backward
// included, it gives the graph and the bits of the pass run before backward() (what corun train did through
// LstmConfig::before_backward), the same decisions under auto, and CORUN_VERBOSE=passes lists it.
bool same_graph(const Graph& a, const Graph& b) {
  const auto& na = a.impl().nodes;
  const auto& nb = b.impl().nodes;
  if (na.size() != nb.size() || a.impl().values.size() != b.impl().values.size()) return false;
  for (size_t k = 0; k < na.size(); ++k)
    if (na[k].name != nb[k].name || na[k].call.kind != nb[k].call.kind || na[k].buffers != nb[k].buffers) return false;
  return true;
}

Config plan_step_projection(std::optional<bool> on, bool verbose = false) {
  Config c;
  c.parallel_ops = false;
  c.input_projection = on;
  c.input_projection_auto = !on.has_value();
  c.verbose_passes = verbose;
  return c;
}

TEST(InputProjectionPlanStep, ATrainingGraphGetsTheGraphAndBitsOfThePassBeforeBackward) {
  models::Lstm before(tiny_lstm(true)), planned(tiny_lstm(false));
  ::testing::internal::CaptureStderr();
  const GraphPassReport r = apply_graph_passes(planned.graph, plan_step_projection(true, true));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.stacked_input_projections, 2);
  EXPECT_TRUE(same_graph(planned.graph, before.graph));
  EXPECT_NE(err.find("corun: input-projection pass: w0: "), std::string::npos) << err;
  EXPECT_NE(err.find("corun: pass input_projection: 2 of 2 RNN layer(s) given one stacked input product, the "
                     "backward expanded again"),
            std::string::npos)
      << err;
  EXPECT_EQ(test::train_lstm_inline(planned, 3, true), test::train_lstm_inline(before, 3, true));
  // Once per graph: a second plan step leaves it alone.
  const int nodes = planned.graph.num_nodes();
  EXPECT_EQ(apply_graph_passes(planned.graph, plan_step_projection(true)).stacked_input_projections, 0);
  EXPECT_EQ(planned.graph.num_nodes(), nodes);
}

TEST(InputProjectionPlanStep, AutoDecidesAsBeforeBackward) {
  models::LstmConfig shape = tiny_lstm(false);  // large enough for the cost model to stack layer 0 (not run)
  shape.batch = 64, shape.hidden = shape.input = 128, shape.seq = 20;
  models::LstmConfig c = shape;
  std::vector<InputProjectionDecision> earlier;
  c.before_backward = [&](Graph& g) { earlier = plan_input_projections(g, plan_step_projection(std::nullopt)); };
  models::Lstm before(c), planned(shape);
  apply_graph_passes(planned.graph, plan_step_projection(std::nullopt));
  ASSERT_EQ(earlier.size(), 2u);
  EXPECT_TRUE(earlier[0].applied) << earlier[0].reason;   // layer 0 reads the graph's inputs
  EXPECT_FALSE(earlier[1].applied) << earlier[1].reason;  // layer 1's come step by step from layer 0
  EXPECT_TRUE(same_graph(planned.graph, before.graph));
  // Unset, the plan step runs no input-projection pass at all.
  models::Lstm untouched(shape), reference(shape);
  EXPECT_FALSE(same_graph(planned.graph, reference.graph));
  Config unset;
  unset.parallel_ops = false;
  apply_graph_passes(untouched.graph, unset);
  EXPECT_TRUE(same_graph(untouched.graph, reference.graph));
}

TEST(InputProjectionPlanStep, OptimizerStateAndLearningRateSurvive) {
  models::LstmConfig c = tiny_lstm(false);
  c.momentum = 0.9f;
  models::Lstm m(c);
  m.graph.set_learning_rate(0.25f);
  for (Tensor v : m.graph.optimizer_state()) m.graph.data(v)[0] = 3.5f;  // e.g. a checkpoint loaded before binding
  const size_t states = m.graph.optimizer_state().size();
  apply_graph_passes(m.graph, plan_step_projection(true));
  ASSERT_EQ(m.graph.optimizer_state().size(), states);
  for (Tensor v : m.graph.optimizer_state()) EXPECT_EQ(m.graph.data(v)[0], 3.5f) << v.name();
  int updates = 0;
  for (const auto& n : m.graph.impl().nodes) {
    if (n.call.kind != OpKind::sgd_momentum) continue;
    EXPECT_EQ(n.call.f, 0.25f) << n.name;
    ++updates;
  }
  EXPECT_EQ(static_cast<size_t>(updates), states);
  EXPECT_EQ(count(m.graph, OpKind::concat), 2);  // stacked
}

TEST(InputProjectionPlanStep, AGraphChangedAfterBackwardIsSkippedAndSaysWhy) {
  models::Lstm m(tiny_lstm(false));
  m.graph.relu(m.graph.grad(m.graph.find("w0")), "after_backward");
  const int nodes = m.graph.num_nodes();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(apply_graph_passes(m.graph, plan_step_projection(true)).stacked_input_projections, 0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("corun: pass input_projection: skipped: nodes or values were added after backward()"),
            std::string::npos)
      << err;
  EXPECT_EQ(m.graph.num_nodes(), nodes);
  EXPECT_THROW(plan_input_projections(m.graph, plan_step_projection(true)), Error);
}

TEST(InputProjection, EnvironmentVariable) {
  ::setenv("CORUN_INPUT_PROJECTION", "auto", 1);
  Config a = Config::from_env();
  EXPECT_TRUE(a.input_projection_auto);
  EXPECT_FALSE(a.input_projection.has_value());
  ::setenv("CORUN_INPUT_PROJECTION", "off", 1);
  EXPECT_EQ(Config::from_env().input_projection, std::optional<bool>(false));
  ::setenv("CORUN_INPUT_PROJECTION", "stacked", 1);
  EXPECT_THROW(Config::from_env(), Error);
  ::unsetenv("CORUN_INPUT_PROJECTION");
  Config u = Config::from_env();
  EXPECT_FALSE(u.input_projection_auto || u.input_projection.has_value());
}

}  // namespace
}  // namespace corun
