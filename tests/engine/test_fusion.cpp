// Graph::fuse_elementwise on StarPU: a fused graph computes bitwise the same numbers as the unfused one with
// the same kernels, and fused-away values give clear errors.
//
// Why bitwise: an ew_chain evaluates each instruction per element with the very scalar function the op's
// own kernel uses (codelets/elementwise.hpp: the same float exp/tanh in the fast kernels, the same double
// formulas rounded to float in the reference ones), in the graph's order, and rounds to float after every
// instruction like the stored intermediate did. Nothing is reassociated and no FMA contraction happens
// (the build does not enable FMA), so every element goes through identical operations. Submission order
// only moves whole fused nodes, and every kernel's result is independent of the team width.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>
#include <corun/models/lstm.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace corun {
namespace {

using test::test_config;

using test::same_bits;

// Everything a training run produces that the user can read: the loss of each step, then every gradient
// and every parameter after the last step.
std::vector<std::vector<float>> train(Engine& eng, models::Lstm& m, int iters) {
  std::vector<std::vector<float>> out;
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  const models::SequenceTask task(m.config);
  for (int it = 0; it < iters; ++it) {
    task.make_batch(static_cast<uint64_t>(it), xs, targets);
    for (size_t t = 0; t < m.x.size(); ++t) eng.write(m.graph, m.x[t], xs[t]);
    eng.write(m.graph, m.targets, targets);
    eng.run(m.graph);
    out.push_back(eng.read(m.graph, m.loss));
  }
  out.push_back(eng.read(m.graph, m.logits));
  for (Tensor p : m.graph.params()) {
    out.push_back(eng.read(m.graph, m.graph.grad(p)));
    out.push_back(eng.read(m.graph, p));
  }
  eng.release(m.graph);
  return out;
}

class FusedLstm : public ::testing::TestWithParam<bool> {};

TEST_P(FusedLstm, TrainsBitwiseLikeTheUnfusedGraph) {
  models::LstmConfig cfg;
  // seq 10: the bias gradient's accumulation chains get more than 8 buffers (StarPU's dyn_handles path).
  cfg.layers = 2, cfg.batch = 4, cfg.seq = 10, cfg.hidden = 8, cfg.input = 6, cfg.classes = 10, cfg.seed = 17;
  cfg.fused_cell = GetParam();
  models::Lstm plain(cfg), fused(cfg);
  const int before = fused.graph.num_nodes();
  const int removed = fused.graph.fuse_elementwise();
  EXPECT_GT(removed, 0);
  EXPECT_EQ(fused.graph.num_nodes(), before - removed);
  plain.init_params();
  fused.init_params();

  Engine eng(test_config());
  const auto want = train(eng, plain, 3);
  const auto got = train(eng, fused, 3);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(same_bits(got[k], want[k])) << "output " << k;
}

INSTANTIATE_TEST_SUITE_P(Cell, FusedLstm, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "FusedCell" : "UnfusedCell"; });

// An inference chain over every one-operand op and three two-operand ops, on a shape that is not a
// multiple of the kernels' blocks.
TEST(Fusion, InferenceChainBitwise) {
  auto build = [](Graph& g) {
    const Tensor x = g.input("x", {33, 65});
    const Tensor w = g.input("w", {33, 65});
    const Tensor y = g.relu(g.sub(g.tanh(g.mul(x, w)), g.sigmoid(g.add(x, w))), "y");
    g.keep(y);
    return y;
  };
  Graph plain, fused;
  const Tensor y_plain = build(plain);
  const Tensor y_fused = build(fused);
  ASSERT_EQ(fused.fuse_elementwise(), 5);
  ASSERT_EQ(fused.num_nodes(), 1);
  std::mt19937_64 rng(5);
  for (const char* name : {"x", "w"}) {
    const auto v = test::uniform(rng, 33 * 65, -3.0f, 3.0f);
    std::copy(v.begin(), v.end(), plain.data(plain.find(name)));
    std::copy(v.begin(), v.end(), fused.data(fused.find(name)));
  }
  Engine eng(test_config());
  eng.run(plain);
  eng.run(fused);
  EXPECT_TRUE(same_bits(eng.read(fused, y_fused), eng.read(plain, y_plain)));
  eng.release(plain);
  eng.release(fused);
}

// A chainable activation and its gradient: a training graph through `act` (forward chain mul -> act, backward
// chain act_grad -> mul) fused gives the unfused loss and gradient bitwise. Inputs in [-3, 3], so x * w reaches
// every piece of the piecewise ones.
template <class Act>
void expect_training_fusion_bitwise(Act act) {
  auto build = [&](Graph& g) {
    const Tensor x = g.input("x", {17, 65});
    const Tensor w = g.param("w", {17, 65});
    const Tensor y = act(g, g.mul(act(g, g.mul(x, w)), w));
    const Tensor loss = g.reduce_sum(y, 0.5f, "loss");
    g.backward(loss, {.sgd_update = false});
    return loss;
  };
  Graph plain, fused;
  const Tensor l_plain = build(plain);
  const Tensor l_fused = build(fused);
  ASSERT_GT(fused.fuse_elementwise(), 0);
  std::mt19937_64 rng(7);
  for (const char* name : {"x", "w"}) {
    const auto v = test::uniform(rng, 17 * 65, -3.0f, 3.0f);
    std::copy(v.begin(), v.end(), plain.data(plain.find(name)));
    std::copy(v.begin(), v.end(), fused.data(fused.find(name)));
  }
  Engine eng(test_config());
  eng.run(plain);
  eng.run(fused);
  EXPECT_TRUE(same_bits(eng.read(fused, l_fused), eng.read(plain, l_plain)));
  const Tensor gw_plain = plain.grad(plain.find("w"));
  const Tensor gw_fused = fused.grad(fused.find("w"));
  EXPECT_TRUE(same_bits(eng.read(fused, gw_fused), eng.read(plain, gw_plain)));
  eng.release(plain);
  eng.release(fused);
}

TEST(Fusion, GeluTrainingBitwise) {
  expect_training_fusion_bitwise([](Graph& g, Tensor t) { return g.gelu(t); });
}

TEST(Fusion, HardSwishTrainingBitwise) {
  expect_training_fusion_bitwise([](Graph& g, Tensor t) { return g.hard_swish(t); });
}

TEST(Fusion, FusedAwayValuesCannotBeReadOrWritten) {
  Graph g;
  const Tensor x = g.input("x", {4, 4});
  const Tensor s = g.sigmoid(x, "s");
  const Tensor y = g.tanh(s, "y");
  g.keep(y);
  ASSERT_EQ(g.fuse_elementwise(), 1);
  Engine eng(test_config());
  eng.run(g);
  EXPECT_CORUN_ERROR(eng.read(g, s), Status::invalid_argument, "Engine::read", "'s'", "fuse_elementwise",
                     "Graph::keep()");
  EXPECT_CORUN_ERROR(eng.write(g, s, std::vector<float>(16, 1.0f)), Status::invalid_argument, "Engine::write", "'s'",
                     "keep()");
  EXPECT_EQ(eng.read(g, y).size(), 16u);
  eng.release(g);
}

TEST(Fusion, BoundGraphsCannotBeFused) {
  Graph g;
  const Tensor x = g.input("x", {4, 4});
  const Tensor y = g.tanh(g.sigmoid(x));
  g.keep(y);
  Engine eng(test_config());
  eng.run(g);
  EXPECT_CORUN_ERROR(g.fuse_elementwise(), Status::invalid_argument, "fuse_elementwise", "bound to an Engine");
  eng.release(g);
  EXPECT_EQ(g.fuse_elementwise(), 1);  // released: the next run registers what is left
  eng.run(g);
  EXPECT_EQ(eng.read(g, y).size(), 16u);
  eng.release(g);
}

}  // namespace
}  // namespace corun
