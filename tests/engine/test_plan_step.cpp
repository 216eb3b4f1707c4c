// The engine's plan step: the graph passes Config asks for (batch norm folding, convolution + activation
// fusion, blocked layouts, elementwise fusion, parallel-op grouping) run on every graph the engine binds,
// before its values are registered, and once per graph; the numbers stay bitwise those of the graph without
// the passes (folding: those of the graph folded by hand).
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/wide_deep.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace corun {
namespace {

using test::same_bits;
using test::test_config;

struct Inference {
  RunStats first, again;  // the first run, and one after release() and a new binding
  std::vector<float> logits;
  int nodes = 0;
};

// Two wide&deep batch-1 inferences of the same inputs under `config`, the graph released in between.
Inference infer(const Config& config) {
  models::WideDeepConfig cfg;
  cfg.batch = 1;
  models::WideDeep m(cfg, /*training=*/false);
  m.init_params();
  const models::TabularTask task(cfg);
  std::vector<float> cats, dense, labels;
  task.make_batch(3, cats, dense, labels);
  Inference r;
  Engine eng(config);
  eng.write(m.graph, m.categories, cats);  // the first binding: the plan step runs here
  eng.write(m.graph, m.dense, dense);
  r.first = eng.run(m.graph);
  r.logits = eng.read(m.graph, m.logits);
  eng.release(m.graph);
  r.again = eng.run(m.graph);
  EXPECT_TRUE(same_bits(eng.read(m.graph, m.logits), r.logits));
  eng.release(m.graph);
  r.nodes = m.graph.num_nodes();
  return r;
}

TEST(EnginePlanStep, GroupingFromConfigGivesFewerTasksAndTheSameBits) {
  Config off = test_config("eager");
  off.parallel_ops = false;
  const Inference plain = infer(off);
  EXPECT_EQ(plain.first.tasks, 38);
  Config on = test_config("eager");
  on.parallel_ops.reset();
  on.parallel_ops_by_default = true;  // as corun infer
  const Inference grouped = infer(on);
  EXPECT_EQ(grouped.first.tasks, 13);
  EXPECT_EQ(grouped.again.tasks, 13) << "a new binding does not group again";
  EXPECT_EQ(grouped.nodes, 13);
  EXPECT_TRUE(same_bits(grouped.logits, plain.logits));
}

TEST(EnginePlanStep, FusionFromConfigAndAReadOfWhatItRemoved) {
  Graph g;
  const Tensor x = g.input("x", {4, 4});
  const Tensor s = g.sigmoid(x, "s");
  const Tensor y = g.relu(g.tanh(s), "y");
  g.keep(y);
  const std::vector<float> in = {-2, -1, 0, 1, 2, 3, -3, 0.5f, -0.5f, 4, -4, 1.5f, -1.5f, 2.5f, -2.5f, 0.25f};
  Config c = test_config("eager");
  c.fuse_elementwise = true;
  Engine eng(c);
  eng.write(g, x, in);
  const RunStats st = eng.run(g);
  EXPECT_EQ(st.tasks, 1) << "sigmoid, tanh and relu: one fused task";
  const std::vector<float> out = eng.read(g, y);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_NEAR(out[i], std::max(0.0f, std::tanh(1.0f / (1.0f + std::exp(-in[i])))), 1e-5f);
  EXPECT_CORUN_ERROR(eng.read(g, s), Status::invalid_argument, "Engine::read", "'s'", "Graph::keep()");
  eng.release(g);
}

// A graph bound with a Config that asks for nothing keeps its nodes; the passes cannot run on a bound graph.
TEST(EnginePlanStep, NoPassWithoutConfigAndNoneOnABoundGraph) {
  models::WideDeepConfig cfg;
  cfg.batch = 1;
  models::WideDeep m(cfg, /*training=*/false);
  m.init_params();
  Config none = test_config("eager");
  none.parallel_ops = false;
  Engine eng(none);
  EXPECT_EQ(eng.run(m.graph).tasks, 38);
  Config on = none;
  on.parallel_ops = true;
  EXPECT_CORUN_ERROR(apply_graph_passes(m.graph, on), Status::invalid_argument, "bound to an Engine");
  EXPECT_EQ(m.graph.num_nodes(), 38);
  eng.release(m.graph);
  EXPECT_EQ(apply_graph_passes(m.graph, on).groups.size(), 1u);  // released: the passes may run
  EXPECT_EQ(eng.run(m.graph).tasks, 13);
  eng.release(m.graph);
}

// x -> conv -> batch norm (inference) -> relu -> conv: what a CNN's inference graph is made of.
struct ConvNet {
  Graph g;
  Tensor x, out;
  explicit ConvNet(bool training) {
    std::mt19937_64 rng(11);
    x = g.input("x", {2, 16, 8, 8});
    const Tensor w = g.param("w", {16, 16, 3, 3});
    const Tensor w2 = g.param("w2", {16, 16, 3, 3});
    const Tensor scale = g.param("scale", {16}), bias = g.param("bias", {16});
    const Tensor mean = g.state("mean", {16}), var = g.state("var", {16});
    for (Tensor t : {x, w, w2, scale, bias, mean}) test::fill_uniform(g, t, rng);
    test::fill_uniform(g, var, rng, 0.5f, 1.5f);
    Conv2dOptions o;
    o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
    const Tensor y = g.batch_norm(g.conv2d(x, w, Tensor(), o, "conv"), scale, bias, mean, var, 1e-5f, 0.1f, training, "bn");
    out = g.conv2d(g.relu(y, "act"), w2, Tensor(), o, "out");
    if (training) {
      const Tensor targets = g.input("targets", {2, 1024});
      g.backward(g.softmax_xent(g.reshape(out, {2, 1024}), targets, "loss"), {.learning_rate = 0.01f});
    }
  }
};

Config layout_passes(bool on) {
  Config c = test_config("eager");
  c.parallel_ops = false;
  c.fold_batch_norm = c.fuse_conv_activation = c.block_layouts = on;
  return c;
}

std::vector<float> infer(ConvNet& net, const Config& config) {
  Engine eng(config);
  eng.run(net.g);
  std::vector<float> y = eng.read(net.g, net.out);
  eng.release(net.g);
  return y;
}

// corun infer, corun train and a program that links the library get one graph from one Config: the plan step
// runs the passes the CLI used to call itself, in its order, once per graph.
TEST(EnginePlanStep, LayoutPassesFromConfigGiveTheGraphOfTheGraphMethods) {
  ConvNet by_hand(false), by_config(false);
  const int folded = by_hand.g.fold_batch_norm();
  const int fused = by_hand.g.fuse_conv_activation();
  const int blocked = by_hand.g.block_layouts();
  EXPECT_EQ(folded, 1);
  EXPECT_EQ(fused, 1);
  const GraphPassReport report = apply_graph_passes(by_config.g, layout_passes(true));
  EXPECT_EQ(report.folded_batch_norms, folded);
  EXPECT_EQ(report.fused_activations, fused);
  EXPECT_EQ(report.blocked_tensors, blocked);
  EXPECT_EQ(report.nodes_after, by_hand.g.num_nodes());
  const GraphPassReport again = apply_graph_passes(by_config.g, layout_passes(true));
  EXPECT_EQ(again.folded_batch_norms + again.fused_activations + again.blocked_tensors, 0) << "each pass runs once";
  EXPECT_TRUE(same_bits(infer(by_config, layout_passes(true)), infer(by_hand, layout_passes(false))));
  // Bound with the same Config and no explicit call, the engine's plan step does the same.
  ConvNet at_bind(false);
  EXPECT_TRUE(same_bits(infer(at_bind, layout_passes(true)), infer(by_hand, layout_passes(false))));
  EXPECT_EQ(at_bind.g.num_nodes(), by_hand.g.num_nodes());
}

// On a training graph the inference passes are skipped (they would rewrite weights or drop what the gradients
// read); blocked layouts still apply. CORUN_VERBOSE=passes says so, one line per pass.
TEST(EnginePlanStep, ATrainingGraphSkipsTheInferencePassesAndSaysSo) {
  ConvNet net(true);
  const int nodes = net.g.num_nodes();
  Config config = layout_passes(true);
  config.verbose_passes = true;
  ::testing::internal::CaptureStderr();
  const GraphPassReport report = apply_graph_passes(net.g, config);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(report.folded_batch_norms, 0);
  EXPECT_EQ(report.fused_activations, 0);
  EXPECT_EQ(net.g.num_nodes(), nodes);
  EXPECT_NE(err.find("corun: pass fold_batch_norm: skipped: a training graph"), std::string::npos) << err;
  EXPECT_NE(err.find("corun: pass fuse_conv_activation: skipped: a training graph"), std::string::npos) << err;
  EXPECT_NE(err.find("corun: pass block_layouts: " + std::to_string(report.blocked_tensors) + " tensor(s)"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace corun
