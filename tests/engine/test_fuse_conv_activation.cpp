// Graph::fuse_conv_activation (graphs/passes/fuse_conv_activation.cpp): a relu or clip that alone reads a
// convolution's output becomes part of the convolution. The fused graph must compute bitwise the unfused
// graph's numbers on every kernel path (im2col + OpenBLAS with fewer than 8 filters, oneDNN blocked, oneDNN
// depthwise, oneDNN on plain layouts for 1x1 on 16x16 maps, oneDNN channel tiles at batch 1), and the pass
// must leave alone what it cannot fuse: an output another node reads, an output the user keeps.
#include "engine_test_util.hpp"

#include "codelets/conv2d/conv2d.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace corun {
namespace {

using Act = codelets::ConvActivation;

struct Case {
  const char* name;
  Shape x;  // [N, C, H, W]
  int k, r, pad, groups;
  bool bias;
  Act act;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class FuseConvActivation : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { engine_ = new Engine(test::test_config()); }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  static Engine* engine_;

  // x -> conv -> activation -> conv(3 filters) -> out: the fused convolution's output feeds another one, as in
  // a network. Filled from the same seed, so two builds hold the same numbers.
  static Tensor build(Graph& g, const Case& c) {
    std::mt19937_64 rng(7);
    const Tensor x = g.input("x", c.x);
    const Tensor w = g.param("w", {c.k, c.x[1] / c.groups, c.r, c.r});
    const Tensor w2 = g.param("w2", {3, c.k, 1, 1});
    for (Tensor t : {x, w, w2}) test::fill_uniform(g, t, rng, -1.0f, 1.0f);
    Tensor b;
    if (c.bias) {
      b = g.param("b", {c.k});
      test::fill_uniform(g, b, rng, -0.5f, 0.5f);
    }
    Conv2dOptions o;
    o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = c.pad;
    o.groups = c.groups;
    const Tensor y = g.conv2d(x, w, b, o, "conv");
    const Tensor a = activation(g, y, c.act);
    return g.conv2d(a, w2, Tensor(), Conv2dOptions{}, "out");
  }
  // Clip to [0, 1.5] so that both bounds bite on these values; hard_sigmoid with alpha 0.4 so that its flat pieces
  // (below -1.25, above 1.25) occur as well as hard_swish's (below -3, above 3).
  static Tensor activation(Graph& g, Tensor y, Act act) {
    switch (act) {
      case Act::clip: return g.clip(y, 0.0f, 1.5f, "act");
      case Act::hard_swish: return g.hard_swish(y, "act");
      case Act::hard_sigmoid: return g.hard_sigmoid(y, 0.4f, 0.5f, "act");
      default: return g.relu(y, "act");
    }
  }
};
Engine* FuseConvActivation::engine_ = nullptr;

TEST_P(FuseConvActivation, SameBitsAsUnfused) {
  const Case& c = GetParam();
  Graph plain, fused;
  const Tensor want_t = build(plain, c), got_t = build(fused, c);
  ASSERT_EQ(fused.fuse_conv_activation(), 1);
  EXPECT_EQ(fused.num_nodes(), plain.num_nodes() - 1);
  const std::vector<float> want = test::run_and_read(*engine_, plain, want_t), got = test::run_and_read(*engine_, fused, got_t);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  // The activation bit: not every value on one side of zero.
  int positive = 0;
  for (float v : want) positive += v > 0.0f;
  EXPECT_GT(positive, 0);
  EXPECT_LT(positive, static_cast<int>(want.size()));
}

INSTANTIATE_TEST_SUITE_P(
    KernelPaths, FuseConvActivation,
    ::testing::Values(Case{"im2col_k4", {3, 3, 7, 6}, 4, 3, 1, 1, true, Act::relu},
                      Case{"dnnl_blocked_k20", {5, 8, 7, 6}, 20, 3, 1, 1, true, Act::relu},
                      Case{"dnnl_blocked_clip_no_bias", {5, 8, 7, 6}, 20, 3, 1, 1, false, Act::clip},
                      Case{"dnnl_depthwise_clip", {3, 24, 6, 6}, 24, 3, 1, 24, true, Act::clip},
                      Case{"dnnl_plain_1x1", {2, 16, 16, 16}, 24, 1, 0, 1, false, Act::relu},
                      Case{"dnnl_batch1_channel_tiles", {1, 16, 5, 5}, 40, 3, 1, 1, true, Act::relu},
                      Case{"im2col_hard_swish", {3, 3, 7, 6}, 4, 3, 1, 1, true, Act::hard_swish},
                      Case{"dnnl_blocked_hard_swish", {5, 8, 7, 6}, 20, 3, 1, 1, true, Act::hard_swish},
                      Case{"dnnl_depthwise_hard_swish", {3, 24, 6, 6}, 24, 3, 1, 24, true, Act::hard_swish},
                      Case{"dnnl_plain_1x1_hard_sigmoid", {2, 16, 16, 16}, 24, 1, 0, 1, true, Act::hard_sigmoid},
                      Case{"im2col_hard_sigmoid", {3, 3, 7, 6}, 4, 3, 1, 1, false, Act::hard_sigmoid}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

// What cannot be fused stays as it is: the convolution's output read by another node too, or kept.
TEST(FuseConvActivationRefuses, OutputReadElsewhereOrKept) {
  for (int variant : {0, 1}) {
    Graph g;
    const Tensor x = g.input("x", {1, 2, 4, 4});
    const Tensor w = g.param("w", {8, 2, 3, 3});
    const Tensor y = g.conv2d(x, w, Tensor(), Conv2dOptions{}, "conv");
    const Tensor a = g.relu(y, "act");
    if (variant == 0) g.add(a, y, "sum");  // y has a second reader
    else g.keep(y);                         // the user reads y
    const int nodes = g.num_nodes();
    EXPECT_EQ(g.fuse_conv_activation(), 0) << "variant " << variant;
    EXPECT_EQ(g.num_nodes(), nodes);
  }
}

// Training graphs: the gradient of a relu reads its input, which fusing removes. Refused both ways.
TEST(FuseConvActivationRefuses, TrainingGraphs) {
  {
    Graph g;
    const Tensor x = g.input("x", {1, 2, 4, 4});
    const Tensor w = g.param("w", {8, 2, 3, 3});
    const Tensor loss = g.sum(g.sum(g.sum(g.sum(g.relu(g.conv2d(x, w, Tensor(), Conv2dOptions{}), "act"), 0), 0), 0), 0);
    g.backward(loss, {.sgd_update = false});
    EXPECT_THROW(g.fuse_conv_activation(), Error);
  }
  {
    Graph g;
    const Tensor x = g.input("x", {1, 2, 4, 4});
    const Tensor w = g.param("w", {8, 2, 3, 3});
    const Tensor a = g.relu(g.conv2d(x, w, Tensor(), Conv2dOptions{}), "act");
    const Tensor loss = g.sum(g.sum(g.sum(g.sum(a, 0), 0), 0), 0);
    ASSERT_EQ(g.fuse_conv_activation(), 1);
    EXPECT_THROW(g.backward(loss, {.sgd_update = false}), Error);
  }
}

}  // namespace
}  // namespace corun
