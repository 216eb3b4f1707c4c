// Graph::block_layouts on training graphs (graphs/passes/block_layouts.cpp): after backward(), activations and
// their gradients stay in oneDNN's blocked layout between the convolutions, their gradients, max and average
// pooling, concat / split and the per-element ops. Training must give bitwise the plain graph's losses and parameters,
// and the pass must block the tensors an inception module passes around (its concat, the pools, the branches).
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/cnn.hpp>

#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace corun {
namespace {

struct Trained {
  std::vector<float> losses;
  std::vector<std::vector<float>> params;
};

Trained train(models::Cnn& m, int steps) {
  m.init_params();
  const models::SyntheticImages data(m.config);
  Trained r;
  Engine eng(test::test_config());
  for (int s = 0; s < steps; ++s) {
    std::vector<float> images, targets;
    data.make_batch(static_cast<uint64_t>(s), images, targets);
    eng.write(m.graph, m.x, images);
    eng.write(m.graph, m.targets, targets);
    eng.run(m.graph);
    r.losses.push_back(eng.read(m.graph, m.loss)[0]);
  }
  for (Tensor p : m.graph.params()) r.params.push_back(eng.read(m.graph, p));
  eng.release(m.graph);
  return r;
}

// The op kinds that touch at least one blocked tensor.
std::set<std::string> kinds_touching_blocked(const Graph& g) {
  std::set<std::string> out;
  for (const auto& n : g.impl().nodes)
    for (int v : n.buffers)
      if (g.impl().values[static_cast<size_t>(v)].channel_block != 0) out.insert(codelets::op_info(n.call.kind).name);
  return out;
}

class BlockLayoutsTraining : public ::testing::TestWithParam<codelets::ConvKernel> {
 protected:
  void SetUp() override {
    if (codelets::dnnl_channel_block() == 0) GTEST_SKIP() << "no oneDNN blocked convolution kernels on this CPU";
  }
  // The kernels of the parameter on both graphs (CORUN_CONV_KERNEL), chosen before the blocked one is blocked.
  int block(Graph& plain, Graph& blocked) const {
    test::choose_conv_kernel(plain, GetParam());
    test::choose_conv_kernel(blocked, GetParam());
    return blocked.block_layouts();
  }
};

// GoogLeNet small at batch 6 (image chunks of 4 and 2) on 32x32 images, 3 SGD-with-momentum steps.
TEST_P(BlockLayoutsTraining, GoogLeNetTrainsBitwiseTheSame) {
  models::CnnConfig cfg = models::googlenet_config("small");
  cfg.batch = 6, cfg.image = 32;
  models::Cnn plain(cfg), blocked(cfg);
  const int count = block(plain.graph, blocked.graph);
  std::printf("googlenet training graph: %d tensors blocked\n", count);
  if (GetParam() != codelets::ConvKernel::im2col) {
    // Every inception module's concat and its gradient's split, the pools and the branches' convolutions.
    EXPECT_GT(count, 100);
    const std::set<std::string> kinds = kinds_touching_blocked(blocked.graph);
    for (const char* k : {"conv2d", "conv2d_grad_data", "conv2d_grad_filter", "max_pool", "max_pool_grad", "concat",
                          "split", "relu", "relu_grad", "add"})
      EXPECT_TRUE(kinds.count(k)) << "no " << k << " touches a blocked tensor";
  } else {
    EXPECT_EQ(count, 0);  // no convolution runs oneDNN's blocked kernels
  }
  const Trained a = train(plain, 3), b = train(blocked, 3);
  EXPECT_TRUE(test::same_bits(a.losses, b.losses)) << "losses differ";
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t k = 0; k < a.params.size(); ++k) EXPECT_TRUE(test::same_bits(a.params[k], b.params[k])) << "parameter " << k;
}

// CIFAR-quick: convolutions of 32 and 64 channels between average pools and relus.
TEST_P(BlockLayoutsTraining, CifarQuickTrainsBitwiseTheSame) {
  models::CnnConfig cfg = models::cifar_quick_config();
  cfg.batch = 6;
  models::Cnn plain(cfg), blocked(cfg);
  const int count = block(plain.graph, blocked.graph);
  if (GetParam() != codelets::ConvKernel::im2col) {
    const std::set<std::string> kinds = kinds_touching_blocked(blocked.graph);
    for (const char* k : {"avg_pool", "avg_pool_grad", "relu", "conv2d_grad_data"})
      EXPECT_TRUE(kinds.count(k)) << "no " << k << " touches a blocked tensor (" << count << " blocked)";
  }
  const Trained a = train(plain, 3), b = train(blocked, 3);
  EXPECT_TRUE(test::same_bits(a.losses, b.losses)) << "losses differ";
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t k = 0; k < a.params.size(); ++k) EXPECT_TRUE(test::same_bits(a.params[k], b.params[k])) << "parameter " << k;
}

// A ResNet-like block with batch norms (conv -> bn -> relu -> conv -> bn, + the block's input -> relu), a 2x2 max
// pool and a 1x1 convolution to 16 classes (at least 8 filters: oneDNN's kernels under auto), trained 3 SGD steps: the batch norms, their running statistics and
// their gradients in the blocked layout.
struct ResidualNet {
  Graph g;
  Tensor x, targets, loss;
  std::vector<Tensor> running;  // the batch norms' running statistics (state)

  ResidualNet() {
    std::mt19937_64 rng(3);
    x = g.input("x", {6, 16, 8, 8});
    targets = g.input("targets", {6, 16});
    const Tensor w0 = g.param("w0", {32, 16, 3, 3}), w1 = g.param("w1", {32, 32, 3, 3}),
                 w2 = g.param("w2", {32, 32, 3, 3}), w3 = g.param("w3", {16, 32, 1, 1});
    for (Tensor t : {x, w0, w1, w2, w3}) test::fill_uniform(g, t, rng, -0.3f, 0.3f);
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t k = 0; k < 16; ++k) g.data(targets)[r * 16 + k] = k == r % 16 ? 1.0f : 0.0f;
    Conv2dOptions pad1;
    pad1.pad_top = pad1.pad_left = pad1.pad_bottom = pad1.pad_right = 1;
    auto bn = [&](Tensor t, const std::string& name) {
      const Tensor scale = g.param(name + ".scale", {32}), bias = g.param(name + ".bias", {32});
      test::fill_uniform(g, scale, rng, 0.5f, 1.5f);
      test::fill_uniform(g, bias, rng, -0.1f, 0.1f);
      running.push_back(g.state(name + ".mean", {32}, 0.0f));
      running.push_back(g.state(name + ".var", {32}, 1.0f));
      return g.batch_norm(t, scale, bias, running[running.size() - 2], running.back(), 1e-5f, 0.9f, true, name);
    };
    const Tensor a = g.relu(g.conv2d(x, w0, Tensor(), pad1, "conv0"), "a");
    const Tensor h = g.relu(bn(g.conv2d(a, w1, Tensor(), pad1, "conv1"), "bn1"), "h");
    const Tensor r = g.relu(g.add(bn(g.conv2d(h, w2, Tensor(), pad1, "conv2"), "bn2"), a, "res"), "r");
    const Tensor logits = g.conv2d(g.max_pool(r, 8, 8, 0, "pool"), w3, Tensor(), Conv2dOptions{}, "logits");
    loss = g.softmax_xent(g.reshape(logits, {6, 16}), targets, "loss");
    g.backward(loss, {.sgd_update = true, .learning_rate = 0.05f});
  }
};

Trained train(ResidualNet& m, int steps) {
  Trained r;
  Engine eng(test::test_config());
  for (int s = 0; s < steps; ++s) {
    eng.run(m.g);
    r.losses.push_back(eng.read(m.g, m.loss)[0]);
  }
  for (Tensor p : m.g.params()) r.params.push_back(eng.read(m.g, p));
  for (Tensor t : m.running) r.params.push_back(eng.read(m.g, t));
  eng.release(m.g);
  return r;
}

TEST_P(BlockLayoutsTraining, BatchNormResidualBlockTrainsBitwiseTheSame) {
  ResidualNet plain, blocked;
  const int count = block(plain.g, blocked.g);
  if (GetParam() != codelets::ConvKernel::im2col) {
    const std::set<std::string> kinds = kinds_touching_blocked(blocked.g);
    for (const char* k : {"batch_norm", "batch_norm_grad", "add", "max_pool", "max_pool_grad"})
      EXPECT_TRUE(kinds.count(k)) << "no " << k << " touches a blocked tensor (" << count << " blocked)";
  }
  const Trained a = train(plain, 3), b = train(blocked, 3);
  EXPECT_TRUE(test::same_bits(a.losses, b.losses)) << "losses differ";
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t k = 0; k < a.params.size(); ++k)
    EXPECT_TRUE(test::same_bits(a.params[k], b.params[k])) << "parameter or running statistic " << k;
}

INSTANTIATE_TEST_SUITE_P(Kernels, BlockLayoutsTraining,
                         ::testing::Values(codelets::ConvKernel::auto_, codelets::ConvKernel::dnnl,
                                           codelets::ConvKernel::im2col),
                         [](const auto& p) {
                           return p.param == codelets::ConvKernel::auto_ ? std::string("auto")
                                  : p.param == codelets::ConvKernel::dnnl ? std::string("dnnl")
                                                                          : std::string("im2col");
                         });

}  // namespace
}  // namespace corun
