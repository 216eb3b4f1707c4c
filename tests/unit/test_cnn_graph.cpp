// Graph building of the CNN ops and models (no numbers): output shapes, the builder's errors for bad shapes
// and windows, the gradient nodes conv2d / pooling / add_n / reshape get, SGD with momentum's velocity
// state, and the three models' sizes (CIFAR-quick's layer shapes, PathNet's modules, GoogLeNet's blocks).
#include <corun/error.hpp>
#include <corun/graph.hpp>
#include <corun/models/cnn.hpp>

#include "common/error_matchers.hpp"
#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Status;
using corun::Tensor;
using corun::ValueKind;
using corun::codelets::OpKind;

std::map<OpKind, int> count_kinds(const Graph& g) {
  std::map<OpKind, int> n;
  for (const auto& node : g.impl().nodes) ++n[node.call.kind];
  return n;
}

TEST(CnnOps, OutputShapes) {
  Graph g;
  const Tensor x = g.input("x", {2, 3, 28, 28});
  const Tensor w = g.param("w", {8, 3, 5, 5});
  const Tensor b = g.param("b", {8});
  EXPECT_EQ(g.conv2d(x, w, b, 1, 2).shape(), (Shape{2, 8, 28, 28}));
  EXPECT_EQ(g.conv2d(x, w, b, 2, 0).shape(), (Shape{2, 8, 12, 12}));
  EXPECT_EQ(g.max_pool(x, 3, 2).shape(), (Shape{2, 3, 13, 13}));
  EXPECT_EQ(g.avg_pool(x, 2, 2, 1).shape(), (Shape{2, 3, 15, 15}));
  EXPECT_EQ(g.add_n({x, x, x}).shape(), x.shape());
  EXPECT_EQ(g.reshape(x, {2, 2352}).shape(), (Shape{2, 2352}));
}

TEST(CnnOps, BuilderErrors) {
  Graph g;
  const Tensor x = g.input("x", {2, 3, 6, 6});
  const Tensor flat = g.input("flat", {2, 108});
  const Tensor w = g.param("w", {4, 3, 3, 3});
  const Tensor w_bad_c = g.param("w2", {4, 2, 3, 3});
  const Tensor b = g.param("b", {4});
  const Tensor b_bad = g.param("b2", {5});
  const Tensor w7 = g.param("w7", {4, 3, 7, 7});
  EXPECT_CORUN_ERROR(g.conv2d(flat, w, b), Status::invalid_argument, "conv2d", "must be 4-D", "[2, 108]");
  EXPECT_CORUN_ERROR(g.conv2d(x, w_bad_c, b), Status::invalid_argument, "C the input's channels");
  EXPECT_CORUN_ERROR(g.conv2d(x, w, b_bad), Status::invalid_argument, "the bias must be [K]");
  EXPECT_CORUN_ERROR(g.conv2d(x, w, b, 0, 1), Status::invalid_argument, "stride >= 1");
  EXPECT_CORUN_ERROR(g.conv2d(x, w7, b), Status::invalid_argument, "does not fit the input", "more padding");
  EXPECT_CORUN_ERROR(g.max_pool(x, 2, 2, 2), Status::invalid_argument, "0 <= pad < window");
  EXPECT_CORUN_ERROR(g.avg_pool(x, 7, 1), Status::invalid_argument, "does not fit");
  EXPECT_CORUN_ERROR(g.max_pool(flat, 2, 2), Status::invalid_argument, "must be 4-D");
  EXPECT_CORUN_ERROR(g.add_n({x, flat}), Status::invalid_argument, "add_n", "same shape");
  EXPECT_CORUN_ERROR(g.add_n({}), Status::invalid_argument, "no operands");
  EXPECT_CORUN_ERROR(g.reshape(x, {2, 100}), Status::invalid_argument, "element counts differ");
}

TEST(CnnOps, GradientNodes) {
  Graph g;
  const Tensor x = g.input("x", {2, 1, 8, 8});
  const Tensor w = g.param("w", {4, 1, 3, 3});
  const Tensor b = g.param("b", {4});
  Tensor h = g.conv2d(x, w, b, 1, 1);
  h = g.add_n({g.max_pool(h, 2, 2), g.avg_pool(h, 2, 2)});
  const Tensor wd = g.param("wd", {64, 3});
  const Tensor t = g.input("t", {2, 3});
  g.backward(g.softmax_xent(g.matmul(g.reshape(h, {2, 64}), wd), t), {.learning_rate = 0.1f, .momentum = 0.9f});
  auto n = count_kinds(g);
  EXPECT_EQ(n[OpKind::conv2d_grad_filter], 1);
  EXPECT_EQ(n[OpKind::conv2d_grad_data], 0) << "x is an input: no data gradient";
  EXPECT_EQ(n[OpKind::max_pool_grad], 1);
  EXPECT_EQ(n[OpKind::avg_pool_grad], 1);
  EXPECT_EQ(n[OpKind::reshape], 2);  // forward flatten and its backward
  EXPECT_EQ(n[OpKind::sgd_momentum], 3);
  EXPECT_EQ(n[OpKind::sgd], 0);
  const auto state = g.optimizer_state();
  ASSERT_EQ(state.size(), 3u);
  EXPECT_EQ(state[0].name(), "w.velocity");
  EXPECT_EQ(g.kind(state[0]), ValueKind::state);
  EXPECT_EQ(state[0].shape(), w.shape());
}

TEST(CnnOps, MomentumOutOfRange) {
  Graph g;
  const Tensor w = g.param("w", {1});
  EXPECT_CORUN_ERROR(g.backward(g.sum(w, 0), {.learning_rate = 0.1f, .momentum = 1.0f}), Status::invalid_argument,
                     "momentum must be in [0, 1)");
}

TEST(CnnModels, CifarQuickShapes) {
  corun::models::Cnn m(corun::models::cifar_quick_config());
  EXPECT_EQ(m.x.shape(), (Shape{64, 1, 28, 28}));
  EXPECT_EQ(m.graph.find("pool1").shape(), (Shape{64, 32, 13, 13}));
  EXPECT_EQ(m.graph.find("pool2").shape(), (Shape{64, 32, 6, 6}));
  EXPECT_EQ(m.graph.find("pool3").shape(), (Shape{64, 64, 2, 2}));
  EXPECT_EQ(m.graph.find("fc1.w").shape(), (Shape{256, 64}));
  EXPECT_EQ(m.logits.shape(), (Shape{64, 10}));
  EXPECT_EQ(m.graph.params().size(), 10u);
  EXPECT_EQ(m.graph.optimizer_state().size(), 10u);
  EXPECT_EQ(m.graph.num_nodes(), 46);
}

TEST(CnnModels, PathNetSizes) {
  for (const auto& [size, image, filters] : {std::tuple{"small", 32, 16}, {"medium", 48, 32}, {"large", 64, 48}}) {
    const auto cfg = corun::models::pathnet_config(size);
    EXPECT_EQ(cfg.image, image);
    EXPECT_EQ(cfg.filters, filters);
    EXPECT_EQ(cfg.batch, 64);
  }
  auto cfg = corun::models::pathnet_config("small");
  corun::models::Cnn m(cfg, false);
  auto n = count_kinds(m.graph);
  EXPECT_EQ(n[OpKind::conv2d], 18);  // 3 layers x 6 modules
  EXPECT_EQ(n[OpKind::add_n], 3);
  EXPECT_EQ(m.graph.find("l2.sum").shape(), (Shape{64, 16, 4, 4}));
  EXPECT_CORUN_ERROR(corun::models::pathnet_config("huge"), Status::invalid_argument, "small, medium or large");
}

TEST(CnnModels, GoogLeNetBlocks) {
  auto cfg = corun::models::googlenet_config("small");
  EXPECT_EQ(cfg.image, 64);  // 128 px took 3.4 s per iteration on 2 cores (docs/models.md)
  EXPECT_EQ(cfg.batch, 32);
  EXPECT_EQ(corun::models::googlenet_config("large").width, 4);
  cfg.image = 32;
  cfg.batch = 2;
  corun::models::Cnn m(cfg, false);
  auto n = count_kinds(m.graph);
  EXPECT_EQ(n[OpKind::concat], 9);        // inception 3a, 3b, 4a-4e, 5a, 5b
  EXPECT_EQ(n[OpKind::conv2d], 3 + 9 * 6);  // stem + six convolutions per block
  EXPECT_EQ(m.graph.find("5b").shape(), (Shape{2, 1024, 1, 1}));  // 384 + 384 + 128 + 128 channels
}

}  // namespace
