// The parallel-op grouping pass on graphs built for each rule: the three patterns of the proposal
// (fan-out from one op, fan-in to one op, between two ops), the whitelist, the minimum size, dependent
// siblings and wide&deep (26 embedding lookups -> one task). Numbers are checked on StarPU in
// tests/engine/test_group_numbers.cpp.
#include <corun/graph.hpp>
#include <corun/models/wide_deep.hpp>

#include "common/error_matchers.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/passes/group_parallel_ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace corun {
namespace {

using codelets::OpKind;
using passes::GroupPattern;

std::vector<passes::OpGroup> run_pass(Graph& g, int min_size = 2) {
  return passes::group_parallel_ops(g.impl(), {.enabled = true, .min_size = min_size});
}

int count_kind(const Graph& g, OpKind kind) {
  int n = 0;
  for (const auto& node : g.impl().nodes) n += node.call.kind == kind;
  return n;
}

// x -> split -> 4 relu, each read by its own sum: siblings from one op, no common consumer. The sums read
// different relus (no pattern at first), but once the relus are one group node they fan out from it: the
// second round groups them.
TEST(GroupParallelOps, FanOutFromOneOp) {
  Graph g;
  const auto parts = g.split(g.input("x", {4, 8}), 1, {2, 2, 2, 2}, "parts");
  for (int k = 0; k < 4; ++k)
    g.sum(g.relu(parts[static_cast<size_t>(k)], "r" + std::to_string(k)), 0, 1.0f, "s" + std::to_string(k));
  const auto groups = run_pass(g);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].kind, OpKind::relu);
  EXPECT_EQ(groups[0].pattern, GroupPattern::fan_out);
  EXPECT_EQ(groups[0].members, (std::vector<std::string>{"r0", "r1", "r2", "r3"}));
  EXPECT_EQ(groups[1].kind, OpKind::sum);
  EXPECT_EQ(groups[1].pattern, GroupPattern::fan_out);
  EXPECT_EQ(groups[1].members, (std::vector<std::string>{"s0", "s1", "s2", "s3"}));
  EXPECT_EQ(g.num_nodes(), 3);  // split, the relu group, the sum group
  EXPECT_EQ(count_kind(g, OpKind::relu), 0);
  EXPECT_EQ(count_kind(g, OpKind::sum), 0);
}

// Parallel branches x -> relu -> tanh -> sigmoid (3 of them) -> concat: one group per level. The first
// round can group only the levels next to x or concat (a middle level has no common neighbour yet); the
// rest fan out from or into those group nodes in the next rounds.
TEST(GroupParallelOps, ParallelBranchesLevelByLevel) {
  Graph g;
  const Tensor x = g.input("x", {6});
  std::vector<Tensor> outs;
  for (int k = 0; k < 3; ++k) {
    const std::string id = std::to_string(k);
    outs.push_back(g.sigmoid(g.tanh(g.relu(x, "r" + id), "t" + id), "s" + id));
  }
  g.concat(outs, 0, "cat");
  const auto groups = run_pass(g);
  ASSERT_EQ(groups.size(), 3u);
  std::vector<OpKind> kinds;
  for (const auto& grp : groups) {
    kinds.push_back(grp.kind);
    EXPECT_EQ(grp.members.size(), 3u);
  }
  std::sort(kinds.begin(), kinds.end());
  EXPECT_EQ(kinds, (std::vector<OpKind>{OpKind::sigmoid, OpKind::tanh, OpKind::relu}));
  EXPECT_NE(groups[0].kind, OpKind::tanh);  // the middle level is not grouped in the first round
  EXPECT_EQ(g.num_nodes(), 4);  // relu group, tanh group, sigmoid group, concat
  for (OpKind k : {OpKind::relu, OpKind::tanh, OpKind::sigmoid}) EXPECT_EQ(count_kind(g, k), 0);
}

// 3 separate inputs -> tanh each -> one concat: siblings into one op, no common producer.
TEST(GroupParallelOps, FanInToOneOp) {
  Graph g;
  std::vector<Tensor> ys;
  for (int k = 0; k < 3; ++k) ys.push_back(g.tanh(g.input("x" + std::to_string(k), {5}), "t" + std::to_string(k)));
  g.concat(ys, 0, "cat");
  const auto groups = run_pass(g);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].kind, OpKind::tanh);
  EXPECT_EQ(groups[0].pattern, GroupPattern::fan_in);
  EXPECT_EQ(groups[0].members.size(), 3u);
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.impl().nodes[0].call.kind, OpKind::group);
  EXPECT_EQ(g.impl().nodes[1].name, "cat");
}

// split -> 5 embeddings -> concat: the proposal's figure 1. The group reads the five id columns and the
// five tables and writes the five lookups; its buffer map points each member at its own.
TEST(GroupParallelOps, BetweenTwoOps) {
  Graph g;
  const auto ids = g.split(g.input("ids", {2, 5}), 1, {1, 1, 1, 1, 1}, "ids.split");
  std::vector<Tensor> e;
  for (int k = 0; k < 5; ++k) e.push_back(g.embedding(g.param("T" + std::to_string(k), {7, 3}), ids[static_cast<size_t>(k)]));
  g.concat(e, 1, "cat");
  const auto groups = run_pass(g);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].pattern, GroupPattern::between);
  ASSERT_EQ(g.num_nodes(), 3);  // split, group, concat
  const auto& grp = g.impl().nodes[1];
  ASSERT_EQ(grp.call.kind, OpKind::group);
  EXPECT_EQ(grp.call.members.size(), 5u);
  EXPECT_EQ(grp.buffers.size(), 15u);  // 5 id columns, 5 tables, 5 outputs, all distinct
  EXPECT_EQ(grp.call.program.size(), 15u);
  for (size_t b = 0; b < grp.buffers.size(); ++b)
    EXPECT_EQ(grp.call.modes[b], b % 3 == 2 ? codelets::Access::write : codelets::Access::read);
}

// A value read by several members appears once among the group's buffers.
TEST(GroupParallelOps, SharedInputIsOneBuffer) {
  Graph g;
  const Tensor x = g.relu(g.input("x", {4, 4}), "x.relu");
  for (int k = 0; k < 3; ++k) g.matmul(x, g.param("w" + std::to_string(k), {4, 2}), false, false, "mm" + std::to_string(k));
  ASSERT_EQ(run_pass(g).size(), 1u);
  const auto& grp = g.impl().nodes.back();
  ASSERT_EQ(grp.call.kind, OpKind::group);
  EXPECT_EQ(grp.buffers.size(), 7u);  // x once, three weights, three outputs
  EXPECT_EQ(grp.call.program, (std::vector<int32_t>{0, 1, 2, 0, 3, 4, 0, 5, 6}));
}

TEST(GroupParallelOps, OnlyWhitelistedKinds) {
  Graph g;
  const auto parts = g.split(g.input("x", {3, 4}), 0, {1, 1, 1});
  std::vector<Tensor> cats;
  for (const Tensor& p : parts) cats.push_back(g.concat({p, p}, 0));  // concat is not on the whitelist
  g.concat(cats, 0);
  EXPECT_FALSE(passes::whitelisted(OpKind::concat));
  EXPECT_FALSE(passes::whitelisted(OpKind::group));
  EXPECT_TRUE(passes::whitelisted(OpKind::embedding));
  EXPECT_TRUE(passes::whitelisted(OpKind::leaky_relu) && passes::whitelisted(OpKind::gelu_grad));
  EXPECT_TRUE(passes::whitelisted(OpKind::hard_sigmoid_grad) && passes::whitelisted(OpKind::hard_swish));
  const int before = g.num_nodes();
  EXPECT_TRUE(run_pass(g).empty());
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(GroupParallelOps, MinimumGroupSize) {
  for (const int min_size : {2, 3, 4}) {
    Graph g;
    const auto parts = g.split(g.input("x", {3, 4}), 0, {1, 1, 1});
    std::vector<Tensor> ys;
    for (const Tensor& p : parts) ys.push_back(g.sigmoid(p));
    g.concat(ys, 0);
    EXPECT_EQ(run_pass(g, min_size).size(), min_size <= 3 ? 1u : 0u) << "min size " << min_size;
  }
  Graph g;
  EXPECT_THROW(passes::group_parallel_ops(g.impl(), {.enabled = true, .min_size = 1}), Error);
}

TEST(GroupParallelOps, DisabledDoesNothing) {
  Graph g;
  const auto parts = g.split(g.input("x", {2, 4}), 0, {1, 1});
  g.concat({g.relu(parts[0]), g.relu(parts[1])}, 0);
  EXPECT_TRUE(passes::group_parallel_ops(g.impl(), {.enabled = false, .min_size = 2}).empty());
  EXPECT_EQ(g.num_nodes(), 4);
}

// a2 reads a1's output: siblings of one split, but not independent, so never one task.
TEST(GroupParallelOps, DependentSiblingsStaySeparate) {
  Graph g;
  const auto p = g.split(g.input("x", {4, 2}), 0, {1, 1, 1, 1});
  const Tensor a1 = g.add(p[0], p[1], "a1");
  g.add(p[2], a1, "a2");
  EXPECT_TRUE(run_pass(g).empty());
}

// a1 and a3 are independent; a1 cannot sink to a3 (it would pass uses_a1, which reads its output), so a3
// hoists to a1 instead: the group runs where a1 was, before uses_a1.
TEST(GroupParallelOps, HoistsWhenSinkingIsBlocked) {
  Graph g;
  const auto p = g.split(g.input("x", {4, 2}), 0, {1, 1, 1, 1});
  const Tensor a1 = g.add(p[0], p[1], "a1");
  g.relu(a1, "uses_a1");
  g.add(p[2], p[3], "a3");
  ASSERT_EQ(run_pass(g).size(), 1u);
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.impl().nodes[1].call.kind, OpKind::group);
  EXPECT_EQ(g.impl().nodes[2].name, "uses_a1");
}

// Neither way works: a1 cannot sink past uses_a1 and a3 cannot hoist past q, which makes its input.
TEST(GroupParallelOps, MembersThatCannotMoveStaySeparate) {
  Graph g;
  const auto p = g.split(g.input("x", {4, 2}), 0, {1, 1, 1, 1});
  const Tensor a1 = g.add(p[0], p[1], "a1");
  g.relu(a1, "uses_a1");
  const Tensor q = g.relu(p[3], "q");
  g.add(p[2], q, "a3");
  EXPECT_TRUE(run_pass(g).empty());
}

TEST(GroupParallelOps, BackwardAfterGroupingIsRefused) {
  Graph g;
  const auto parts = g.split(g.param("w", {2, 4}), 0, {1, 1});
  const Tensor l = g.reduce_sum(g.concat({g.relu(parts[0]), g.relu(parts[1])}, 0));
  EXPECT_EQ(g.group_parallel_ops(), 1);
  EXPECT_THROW(g.backward(l), Error);
}

// The proposal's motivating case: 26 embedding lookups become one task (inference), and in training
// their 26 gradients become a second one.
TEST(GroupParallelOps, WideDeepEmbeddingsBecomeOneTask) {
  models::WideDeepConfig cfg;
  cfg.batch = 1;
  cfg.vocab = 100;  // the pass looks at the structure only
  models::WideDeep infer(cfg, /*training=*/false);
  const int before = infer.graph.num_nodes();
  ASSERT_EQ(count_kind(infer.graph, OpKind::embedding), 26);
  const auto groups = run_pass(infer.graph);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].kind, OpKind::embedding);
  EXPECT_EQ(groups[0].pattern, GroupPattern::between);
  EXPECT_EQ(groups[0].members.size(), 26u);
  EXPECT_EQ(infer.graph.num_nodes(), before - 25);
  EXPECT_EQ(count_kind(infer.graph, OpKind::embedding), 0);

  cfg.batch = 8;
  models::WideDeep train(cfg, /*training=*/true);
  ASSERT_EQ(count_kind(train.graph, OpKind::embedding_grad), 26);
  const int train_before = train.graph.num_nodes();
  const auto tgroups = run_pass(train.graph);
  int embedding_groups = 0, grad_groups = 0;
  for (const auto& grp : tgroups) {
    embedding_groups += grp.kind == OpKind::embedding && grp.members.size() == 26;
    grad_groups += grp.kind == OpKind::embedding_grad && grp.members.size() == 26;
  }
  EXPECT_EQ(embedding_groups, 1);
  EXPECT_EQ(grad_groups, 1);
  EXPECT_EQ(count_kind(train.graph, OpKind::embedding_grad), 0);
  std::printf("wide&deep tasks: inference %d -> %d, training %d -> %d (%zu groups)\n", before,
              infer.graph.num_nodes(), train_before, train.graph.num_nodes(), tgroups.size());
}

}  // namespace
}  // namespace corun
