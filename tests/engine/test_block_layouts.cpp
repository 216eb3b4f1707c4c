// Graph::block_layouts (graphs/passes/block_layouts.cpp): activations stay in oneDNN's blocked layout between
// convolutions on its blocked kernels. The blocked graph must compute bitwise the plain graph's numbers (on the
// oneDNN kernels and on the kernels that run on plain copies), block exactly the tensors every user of which
// takes the layout, and refuse what would read blocked bytes as NCHW.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include "codelets/conv2d/conv2d_dnnl.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace corun {
namespace {

// A ResNet-like inference graph: x (plain input) -> conv + relu -> y1 -> conv -> y2; s = y2 + y1; r = relu(s);
// d = depthwise conv of r + clip; out = 1x1 conv of d (16 channels, read by the user). With `pool`, r is also
// read by a max pool (kept): r must stay NCHW, and with it the add and relu that write r and everything they
// read.
struct Net {
  Tensor y1, y2, s, r, d, out, pooled;
};

Net build(Graph& g, int64_t n, bool pool) {
  std::mt19937_64 rng(11);
  const Tensor x = g.input("x", {n, 16, 8, 8});
  const Tensor w1 = g.param("w1", {32, 16, 3, 3}), b1 = g.param("b1", {32});
  const Tensor w2 = g.param("w2", {32, 32, 3, 3});
  const Tensor w3 = g.param("w3", {32, 1, 3, 3}), b3 = g.param("b3", {32});
  const Tensor w4 = g.param("w4", {16, 32, 1, 1});
  for (Tensor t : {x, w1, b1, w2, w3, b3, w4}) test::fill_uniform(g, t, rng, -0.5f, 0.5f);
  Conv2dOptions pad1;
  pad1.pad_top = pad1.pad_left = pad1.pad_bottom = pad1.pad_right = 1;
  Conv2dOptions depthwise = pad1;
  depthwise.groups = 32;
  Net net;
  net.y1 = g.relu(g.conv2d(x, w1, b1, pad1, "conv1"), "y1");
  net.y2 = g.conv2d(net.y1, w2, Tensor(), pad1, "y2");
  net.s = g.add(net.y2, net.y1, "s");
  net.r = g.relu(net.s, "r");
  net.d = g.clip(g.conv2d(net.r, w3, b3, depthwise, "conv3"), 0.0f, 0.3f, "d");
  net.out = g.conv2d(net.d, w4, Tensor(), Conv2dOptions{}, "out");
  g.keep(net.out);
  if (pool) {
    net.pooled = g.max_pool(net.r, 2, 2, 0, "pool");
    g.keep(net.pooled);
  }
  g.fuse_conv_activation();
  return net;
}

class BlockLayouts : public ::testing::TestWithParam<std::tuple<int64_t, bool>> {
 protected:
  static void SetUpTestSuite() { engine_ = new Engine(test::test_config()); }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  void SetUp() override {
    if (codelets::dnnl_channel_block() == 0) GTEST_SKIP() << "no oneDNN blocked convolution kernels on this CPU";
  }
  static Engine* engine_;
};
Engine* BlockLayouts::engine_ = nullptr;

TEST_P(BlockLayouts, SameBitsAsPlainOnEveryKernelPath) {
  const auto [n, pool] = GetParam();
  const int block = static_cast<int>(codelets::dnnl_channel_block());
  // oneDNN where the measured rule picks it (auto), then im2col everywhere on graphs blocked by the auto choice:
  // the convolutions holding blocked tensors run on plain copies of their images.
  for (codelets::ConvKernel kernel : {codelets::ConvKernel::auto_, codelets::ConvKernel::im2col}) {
    Graph plain, blocked;
    const Net p = build(plain, n, pool), b = build(blocked, n, pool);
    // y1 y2 s r d, or with the pool reading r only d.
    EXPECT_EQ(blocked.block_layouts(), pool ? 1 : 5);
    for (Tensor t : {b.y1, b.y2, b.s, b.r}) EXPECT_EQ(blocked.channel_block(t), pool ? 0 : block) << t.name();
    EXPECT_EQ(blocked.channel_block(b.d), block);
    EXPECT_EQ(blocked.channel_block(b.out), 0);
    test::choose_conv_kernel(plain, kernel);
    test::choose_conv_kernel(blocked, kernel);
    const std::vector<float> want = test::run_and_read(*engine_, plain, p.out), got = test::run_and_read(*engine_, blocked, b.out);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << "kernel " << static_cast<int>(kernel);
    if (pool) {
      const std::vector<float> want_pool = test::run_and_read(*engine_, plain, p.pooled), got_pool = test::run_and_read(*engine_, blocked, b.pooled);
      EXPECT_EQ(std::memcmp(got_pool.data(), want_pool.data(), got_pool.size() * sizeof(float)), 0);
    }
  }
}

// Batch 1: channel tiles of whole blocks; batch 6: image chunks of 4 and 2.
INSTANTIATE_TEST_SUITE_P(Batches, BlockLayouts,
                         ::testing::Combine(::testing::Values(int64_t{1}, int64_t{6}), ::testing::Bool()),
                         [](const auto& p) {
                           return "n" + std::to_string(std::get<0>(p.param)) +
                                  (std::get<1>(p.param) ? "_pool_reads_r" : "");
                         });

TEST_F(BlockLayouts, ReadingABlockedTensorIsRefusedAndKeepingItKeepsItPlain) {
  Graph g;
  const Net net = build(g, 2, false);
  ASSERT_GT(g.block_layouts(), 0);
  engine_->run(g);
  try {
    engine_->read(g, net.y2);
    ADD_FAILURE() << "read of a blocked tensor accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("block_layouts"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("keep"), std::string::npos) << e.what();
  }
  engine_->release(g);

  // keep() before the pass: that tensor stays NCHW, and so do the add that reads it and what the add touches
  // (y1, s, r); the depthwise convolution's output d is still blocked.
  Graph k2;
  const Net n2 = build(k2, 2, false);
  k2.keep(n2.y2);
  EXPECT_EQ(k2.block_layouts(), 1);
  for (Tensor t : {n2.y1, n2.y2, n2.s, n2.r}) EXPECT_EQ(k2.channel_block(t), 0) << t.name();
  EXPECT_EQ(k2.channel_block(n2.d), static_cast<int>(codelets::dnnl_channel_block()));
}

TEST_F(BlockLayouts, BackwardAfterTheLayoutsIsRefused) {
  Graph g;
  const Tensor x = g.input("x", {2, 16, 6, 6});
  const Tensor w = g.param("w", {16, 16, 3, 3});
  const Tensor loss =
      g.sum(g.sum(g.sum(g.sum(g.conv2d(g.conv2d(x, w, Tensor(), Conv2dOptions{}), w, Tensor(), Conv2dOptions{}), 0),
                        0), 0), 0);
  ASSERT_EQ(g.block_layouts(), 1);
  try {
    g.backward(loss, {.sgd_update = false});
    ADD_FAILURE() << "backward after block_layouts accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("call backward() first"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace corun
