// InlineRunner (corun/inline.hpp): the calling thread runs every kernel in node order and gets bitwise what
// Engine::run computes (wide&deep inference with and without the parallel-op pass, wide&deep and PathNet
// training steps); it refuses a graph bound to an Engine or changed after the runner was made.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/inline.hpp>
#include <corun/models/cnn.hpp>
#include <corun/models/wide_deep.hpp>

#include "graphs/passes/group_parallel_ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

namespace corun {
namespace {

using test::same_bits;
using test::test_config;

// Writes input `t` of an unbound graph through its host buffer.
void put(Graph& g, Tensor t, const std::vector<float>& v) {
  ASSERT_EQ(static_cast<int64_t>(v.size()), t.shape().numel());
  std::copy(v.begin(), v.end(), g.data(t));
}
std::vector<float> get(const Graph& g, Tensor t) {
  const float* p = g.data(t);
  return {p, p + t.shape().numel()};
}

// Outputs per step (`outputs`), then every parameter, of `steps` runs on StarPU or inline.
using Feed = std::function<void(Graph&, int step)>;
std::vector<std::vector<float>> run_steps(Graph& g, const std::vector<Tensor>& outputs, int steps, const Feed& feed,
                                          bool inline_exec) {
  std::vector<std::vector<float>> out;
  if (inline_exec) {
    InlineRunner runner(g);
    EXPECT_EQ(runner.nodes(), g.num_nodes());
    for (int s = 0; s < steps; ++s) {
      feed(g, s);
      runner.run();
      for (Tensor t : outputs) out.push_back(get(g, t));
    }
  } else {
    Engine eng(test_config());
    for (int s = 0; s < steps; ++s) {
      eng.release(g);  // the graph's host buffers are the inputs' home: write them unbound, as inline does
      feed(g, s);
      eng.run(g);
      for (Tensor t : outputs) out.push_back(eng.read(g, t));
    }
    eng.release(g);
  }
  for (Tensor p : g.params()) out.push_back(get(g, p));
  return out;
}

void expect_same(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(same_bits(a[k], b[k])) << "result " << k << " differs";
}

Feed wide_deep_feed(const models::WideDeep& m, bool training) {
  auto task = std::make_shared<models::TabularTask>(m.config);
  return [task, &m, training](Graph& g, int step) {
    std::vector<float> cats, dense, labels;
    task->make_batch(static_cast<uint64_t>(step), cats, dense, labels);
    put(g, m.categories, cats);
    put(g, m.dense, dense);
    if (training) put(g, m.labels, labels);
  };
}

TEST(InlineRunner, WideDeepInferenceBitwiseAsStarpu) {
  for (int batch : {1, 5})
    for (bool grouped : {false, true}) {
      models::WideDeepConfig cfg;
      cfg.batch = batch, cfg.vocab = 500;
      models::WideDeep a(cfg, false), b(cfg, false);
      a.init_params();
      b.init_params();
      if (grouped) {
        passes::group_parallel_ops(a.graph.impl(), {});
        passes::group_parallel_ops(b.graph.impl(), {});
      }
      const auto on_starpu = run_steps(a.graph, {a.logits}, 4, wide_deep_feed(a, false), false);
      const auto inline_ = run_steps(b.graph, {b.logits}, 4, wide_deep_feed(b, false), true);
      SCOPED_TRACE("batch " + std::to_string(batch) + (grouped ? " grouped" : " ungrouped"));
      expect_same(on_starpu, inline_);
    }
}

TEST(InlineRunner, WideDeepTrainingBitwiseAsStarpu) {
  models::WideDeepConfig cfg;
  cfg.batch = 16, cfg.vocab = 300;
  models::WideDeep a(cfg), b(cfg);
  a.init_params();
  b.init_params();
  passes::group_parallel_ops(a.graph.impl(), {});
  passes::group_parallel_ops(b.graph.impl(), {});
  expect_same(run_steps(a.graph, {a.loss}, 3, wide_deep_feed(a, true), false),
              run_steps(b.graph, {b.loss}, 3, wide_deep_feed(b, true), true));
}

TEST(InlineRunner, PathNetTrainingBitwiseAsStarpu) {
  models::CnnConfig cfg = models::pathnet_config("small");
  cfg.batch = 3, cfg.image = 8, cfg.filters = 4, cfg.layers = 2;
  models::Cnn a(cfg), b(cfg);
  a.init_params();
  b.init_params();
  auto data = std::make_shared<models::SyntheticImages>(cfg);
  auto feed = [data](models::Cnn& m) {
    return [data, &m](Graph& g, int step) {
      std::vector<float> images, targets;
      data->make_batch(static_cast<uint64_t>(step), images, targets);
      put(g, m.x, images);
      put(g, m.targets, targets);
    };
  };
  expect_same(run_steps(a.graph, {a.loss, a.logits}, 2, feed(a), false),
              run_steps(b.graph, {b.loss, b.logits}, 2, feed(b), true));
}

TEST(InlineRunner, RefusesABoundGraph) {
  models::WideDeepConfig cfg;
  cfg.vocab = 50;
  models::WideDeep m(cfg, false);
  InlineRunner runner(m.graph);
  runner.run();
  Engine eng(test_config());
  eng.run(m.graph);  // StarPU now owns the values
  EXPECT_CORUN_ERROR(runner.run(), Status::invalid_argument, "bound to an Engine");
  EXPECT_CORUN_ERROR(InlineRunner{m.graph}, Status::invalid_argument, "Engine::release");
  eng.release(m.graph);
  runner.run();  // the host buffers are valid again
}

TEST(InlineRunner, RefusesAGraphChangedAfterwards) {
  models::WideDeepConfig cfg;
  cfg.vocab = 50;
  models::WideDeep m(cfg, false);
  InlineRunner runner(m.graph);
  passes::group_parallel_ops(m.graph.impl(), {});
  EXPECT_CORUN_ERROR(runner.run(), Status::invalid_argument, "make a new runner");
}

}  // namespace
}  // namespace corun
