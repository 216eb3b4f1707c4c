// The parallel-op grouping pass on StarPU: a grouped graph computes bitwise what the ungrouped one does,
// for a graph holding all three patterns (fan-out, fan-in, between) with its backward and SGD updates,
// for wide&deep training, and for PathNet and GoogLeNet training at tiny sizes (conv2d, pooling, add_n,
// sgd_momentum and their gradients grouped).
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/cnn.hpp>
#include <corun/models/wide_deep.hpp>

#include "graphs/graph_impl.hpp"
#include "graphs/passes/group_parallel_ops.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace corun {
namespace {

using test::same_bits;
using test::test_config;

struct Result {
  std::vector<float> losses;
  std::vector<std::vector<float>> params;
  size_t groups = 0;
  int nodes = 0;
};

// The three patterns in one trainable graph: ids -> split -> 4 embeddings -> concat (between); the
// concat -> split -> 4 tanh, each into its own sum (fan-out); 3 matmuls of separate inputs -> concat
// (fan-in); a logistic loss on top.
struct Patterns {
  Graph g;
  Tensor loss;
  explicit Patterns(std::mt19937_64& rng) {
    const int64_t B = 6;
    const Tensor ids = g.input("ids", {B, 4});
    for (int64_t e = 0; e < B * 4; ++e) g.data(ids)[e] = static_cast<float>((e * 7) % 9);
    const auto cols = g.split(ids, 1, {1, 1, 1, 1});
    std::vector<Tensor> emb;
    for (int k = 0; k < 4; ++k) {
      const Tensor t = g.param("T" + std::to_string(k), {9, 3});
      test::fill_uniform(g, t, rng);
      emb.push_back(g.embedding(t, cols[static_cast<size_t>(k)]));
    }
    const Tensor cat = g.concat(emb, 1);  // [B, 12]
    std::vector<Tensor> sums;
    for (const Tensor& piece : g.split(cat, 1, {3, 3, 3, 3})) sums.push_back(g.sum(g.tanh(piece), 1));
    std::vector<Tensor> mms;
    for (int k = 0; k < 3; ++k) {
      const Tensor x = g.input("x" + std::to_string(k), {B, 2});
      test::fill_uniform(g, x, rng);
      const Tensor w = g.param("w" + std::to_string(k), {2, 1});
      test::fill_uniform(g, w, rng);
      mms.push_back(g.matmul(x, w));
    }
    Tensor z = g.sum(g.concat(mms, 1), 1);  // [B]
    for (const Tensor& s : sums) z = g.add(z, s);
    const Tensor t = g.input("t", {B});
    for (int64_t b = 0; b < B; ++b) g.data(t)[b] = static_cast<float>(b % 2);
    loss = g.logistic_xent(z, t);
    g.backward(loss, {.sgd_update = true, .learning_rate = 0.3f});
  }
};

Result train(Graph& g, Tensor loss, bool grouped, int steps, const std::function<void(Engine&, int)>& feed = {}) {
  Result r;
  if (grouped) r.groups = passes::group_parallel_ops(g.impl(), {.enabled = true, .min_size = 2}).size();
  r.nodes = g.num_nodes();
  Engine eng(test_config());
  for (int s = 0; s < steps; ++s) {
    if (feed) feed(eng, s);
    eng.run(g);
    r.losses.push_back(eng.read(g, loss)[0]);
  }
  for (Tensor p : g.params()) r.params.push_back(eng.read(g, p));
  eng.release(g);
  return r;
}

void expect_same(const Result& a, const Result& b) {
  ASSERT_EQ(a.losses.size(), b.losses.size());
  EXPECT_TRUE(same_bits(a.losses, b.losses)) << "losses differ";
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t k = 0; k < a.params.size(); ++k) EXPECT_TRUE(same_bits(a.params[k], b.params[k])) << "parameter " << k;
}

TEST(GroupNumbers, ThreePatternsTrainBitwiseTheSame) {
  std::mt19937_64 rng1(5), rng2(5);
  Patterns plain(rng1), grouped(rng2);
  const Result a = train(plain.g, plain.loss, false, 3);
  const Result b = train(grouped.g, grouped.loss, true, 3);
  std::printf("patterns graph: %d nodes -> %d nodes, %zu groups\n", a.nodes, b.nodes, b.groups);
  EXPECT_GE(b.groups, 4u);  // embeddings, their gradients, tanh, matmuls at least
  EXPECT_LT(b.nodes, a.nodes);
  expect_same(a, b);
}

TEST(GroupNumbers, WideDeepTrainsBitwiseTheSame) {
  models::WideDeepConfig cfg;
  cfg.batch = 16, cfg.vocab = 300;
  models::WideDeep plain(cfg), grouped(cfg);
  plain.init_params();
  grouped.init_params();
  const models::TabularTask task(cfg);
  auto feeder = [&](models::WideDeep& m) {
    return [&task, &m](Engine& eng, int step) {
      std::vector<float> cats, dense, labels;
      task.make_batch(static_cast<uint64_t>(step), cats, dense, labels);
      eng.write(m.graph, m.categories, cats);
      eng.write(m.graph, m.dense, dense);
      eng.write(m.graph, m.labels, labels);
    };
  };
  const Result a = train(plain.graph, plain.loss, false, 3, feeder(plain));
  const Result b = train(grouped.graph, grouped.loss, true, 3, feeder(grouped));
  std::printf("wide&deep training graph: %d nodes -> %d nodes, %zu groups\n", a.nodes, b.nodes, b.groups);
  expect_same(a, b);
}

// Kinds of the groups the pass made.
std::vector<std::string> group_kinds(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.impl().nodes)
    if (n.call.kind == codelets::OpKind::group) out.push_back(codelets::op_info(n.call.members.front().kind).name);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

void train_cnn_both_ways(const models::CnnConfig& cfg, const std::vector<std::string>& expected_kinds) {
  models::Cnn plain(cfg), grouped(cfg);
  plain.init_params();
  grouped.init_params();
  const models::SyntheticImages data(cfg);
  auto feeder = [&](models::Cnn& m) {
    return [&data, &m](Engine& eng, int step) {
      std::vector<float> images, targets;
      data.make_batch(static_cast<uint64_t>(step), images, targets);
      eng.write(m.graph, m.x, images);
      eng.write(m.graph, m.targets, targets);
    };
  };
  const Result a = train(plain.graph, plain.loss, false, 2, feeder(plain));
  const Result b = train(grouped.graph, grouped.loss, true, 2, feeder(grouped));
  std::printf("%s training graph: %d nodes -> %d nodes, %zu groups\n", models::cnn_name(cfg.kind), a.nodes, b.nodes,
              b.groups);
  EXPECT_LT(b.nodes, a.nodes);
  const auto kinds = group_kinds(grouped.graph);
  for (const std::string& k : expected_kinds) EXPECT_TRUE(has(kinds, k)) << "no group of " << k;
  expect_same(a, b);
}

TEST(GroupNumbers, PathNetTrainsBitwiseTheSame) {
  models::CnnConfig cfg = models::pathnet_config("small");
  cfg.batch = 4, cfg.image = 8, cfg.filters = 4, cfg.layers = 2;
  // Each layer's 6 modules: one task per op kind, forward and backward.
  train_cnn_both_ways(cfg, {"conv2d", "relu", "max_pool", "conv2d_grad_filter", "conv2d_grad_data", "relu_grad",
                            "max_pool_grad", "sgd_momentum"});
}

TEST(GroupNumbers, GoogLeNetTrainsBitwiseTheSame) {
  models::CnnConfig cfg = models::googlenet_config("small");
  cfg.batch = 2, cfg.image = 32;
  train_cnn_both_ways(cfg, {"conv2d", "relu", "conv2d_grad_filter"});
}

}  // namespace
}  // namespace corun
