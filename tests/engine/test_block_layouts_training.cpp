// Graph::block_layouts on training graphs (graphs/passes/block_layouts.cpp): after backward(), activations and
// their gradients stay in oneDNN's blocked layout between the convolutions, their gradients, max pooling,
// concat / split and the per-element ops. Training must give bitwise the plain graph's losses and parameters,
// and the pass must block the tensors an inception module passes around (its concat, the pools, the branches).
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/cnn.hpp>

#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

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
    codelets::set_conv_kernel(GetParam());
  }
  void TearDown() override { codelets::set_conv_kernel(codelets::ConvKernel::auto_); }
};

// GoogLeNet small at batch 6 (image chunks of 4 and 2) on 32x32 images, 3 SGD-with-momentum steps.
TEST_P(BlockLayoutsTraining, GoogLeNetTrainsBitwiseTheSame) {
  models::CnnConfig cfg = models::googlenet_config("small");
  cfg.batch = 6, cfg.image = 32;
  models::Cnn plain(cfg), blocked(cfg);
  const int count = blocked.graph.block_layouts();
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
  blocked.graph.block_layouts();
  const Trained a = train(plain, 3), b = train(blocked, 3);
  EXPECT_TRUE(test::same_bits(a.losses, b.losses)) << "losses differ";
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t k = 0; k < a.params.size(); ++k) EXPECT_TRUE(test::same_bits(a.params[k], b.params[k])) << "parameter " << k;
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
