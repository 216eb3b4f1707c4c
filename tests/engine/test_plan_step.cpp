// The engine's plan step: the graph passes Config asks for (parallel-op grouping, elementwise fusion) run on
// every graph the engine binds, before its values are registered, and once per graph; the numbers stay
// bitwise those of the graph without the passes.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/wide_deep.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

}  // namespace
}  // namespace corun
