// Graph building of the general convolution and pooling forms (issue 19; no numbers): output shapes of
// grouped / dilated / strided / asymmetric convolutions, conv_transpose2d, ceil-mode pools and
// global_avg_pool; the builders' errors; the attributes the square forms keep (so recorded footprints do
// not move); the gradient nodes conv_transpose2d and a bias-free conv2d get.
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "common/error_matchers.hpp"
#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

#include <map>

namespace {

using corun::Conv2dOptions;
using corun::Graph;
using corun::Pool2dOptions;
using corun::Shape;
using corun::Status;
using corun::Tensor;
using corun::codelets::OpKind;

std::map<OpKind, int> count_kinds(const Graph& g) {
  std::map<OpKind, int> n;
  for (const auto& node : g.impl().nodes) ++n[node.call.kind];
  return n;
}

TEST(ConvPoolOps, ConvShapes) {
  Graph g;
  const Tensor x = g.input("x", {2, 6, 11, 10});
  Conv2dOptions o;
  o.stride_h = 2, o.pad_top = 1, o.pad_bottom = 2, o.dilation_w = 2, o.groups = 3;
  // OH = (11 + 3 - 2 - 1) / 2 + 1 = 6; OW = (10 - 2*2 - 1) / 1 + 1 = 6.
  EXPECT_EQ(g.conv2d(x, g.param("w", {9, 2, 3, 3}), g.param("b", {9}), o).shape(), (Shape{2, 9, 6, 6}));
  Conv2dOptions dw;
  dw.groups = 6, dw.pad_top = dw.pad_left = dw.pad_bottom = dw.pad_right = 1;
  EXPECT_EQ(g.conv2d(x, g.param("wd", {12, 1, 3, 3}), Tensor(), dw).shape(), (Shape{2, 12, 11, 10}));
}

TEST(ConvPoolOps, ConvTransposeShapes) {
  Graph g;
  const Tensor z = g.input("z", {4, 16, 4, 4});
  Conv2dOptions o;  // DCGAN: kernel 4, stride 2, padding 1 doubles the size
  o.stride_h = o.stride_w = 2, o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
  EXPECT_EQ(g.conv_transpose2d(z, g.param("w", {16, 8, 4, 4}), g.param("b", {8}), o).shape(), (Shape{4, 8, 8, 8}));
  o.output_padding_w = 1, o.groups = 2;
  EXPECT_EQ(g.conv_transpose2d(z, g.param("w2", {16, 3, 3, 3}), Tensor(), o).shape(), (Shape{4, 6, 7, 8}));
}

TEST(ConvPoolOps, PoolShapes) {
  Graph g;
  const Tensor x = g.input("x", {1, 2, 8, 9});
  Pool2dOptions o;
  o.kernel_h = o.kernel_w = 3, o.stride_h = o.stride_w = 2;
  EXPECT_EQ(g.max_pool(x, o).shape(), (Shape{1, 2, 3, 4}));
  o.ceil_mode = true;  // ceil((8-3)/2)+1 = 4, ceil((9-3)/2)+1 = 4
  EXPECT_EQ(g.max_pool(x, o).shape(), (Shape{1, 2, 4, 4}));
  o.pad_top = o.pad_bottom = 1;  // ceil((8+2-3)/2)+1 = 5, but the 5th window starts at 8 - 1 = 7... inside
  EXPECT_EQ(g.avg_pool(x, o).shape(), (Shape{1, 2, 5, 4}));
  Pool2dOptions p;
  p.kernel_h = p.kernel_w = 2, p.stride_h = p.stride_w = 2, p.pad_top = p.pad_left = 1, p.ceil_mode = true;
  // 4 + 1 - 2 = 3 -> ceil(3/2)+1 = 3 windows; the third would start at 4 - 1 = 3 < 4 + 1: kept.
  EXPECT_EQ(g.max_pool(g.input("y", {1, 1, 4, 4}), p).shape(), (Shape{1, 1, 3, 3}));
  // The last-window rule: 5 + 1 + 1 - 2 = 5 -> ceil(5/2)+1 = 4, but window 3 starts at 6 >= 5 + 1: dropped.
  Pool2dOptions r;
  r.kernel_h = r.kernel_w = 2, r.stride_h = r.stride_w = 2;
  r.pad_top = r.pad_left = r.pad_bottom = r.pad_right = 1, r.ceil_mode = true;
  EXPECT_EQ(g.max_pool(g.input("v", {1, 1, 5, 5}), r).shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(g.global_avg_pool(x).shape(), (Shape{1, 2, 1, 1}));
}

TEST(ConvPoolOps, SquareFormsKeepTheirAttributes) {
  Graph g;
  const Tensor x = g.input("x", {1, 2, 6, 6});
  const Tensor w = g.param("w", {3, 2, 3, 3}), b = g.param("b", {3});
  Conv2dOptions o;
  o.stride_h = o.stride_w = 2, o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
  g.conv2d(x, w, b, o, "general");
  g.conv2d(x, w, b, 2, 1, "square");
  Pool2dOptions p;
  p.kernel_h = p.kernel_w = 3, p.stride_h = p.stride_w = 2;
  g.max_pool(x, p, "pool_general");
  g.max_pool(x, 3, 2, 0, "pool_square");
  const auto& nodes = g.impl().nodes;
  EXPECT_EQ(nodes[0].call.i, nodes[1].call.i);
  EXPECT_EQ(nodes[2].call.i, nodes[3].call.i);
  EXPECT_EQ(nodes[1].call.i[4], 0);
}

TEST(ConvPoolOps, Errors) {
  Graph g;
  const Tensor x = g.input("x", {2, 6, 8, 8});
  Conv2dOptions o;
  o.groups = 4;
  EXPECT_CORUN_ERROR(g.conv2d(x, g.param("w1", {4, 1, 3, 3}), Tensor(), o), Status::invalid_argument, "conv2d",
                     "do not divide into 4 groups");
  o.groups = 3;
  EXPECT_CORUN_ERROR(g.conv2d(x, g.param("w2", {4, 2, 3, 3}), Tensor(), o), Status::invalid_argument,
                     "[K, C/groups, R, S]", "[4, 2, 3, 3]");
  o.groups = 1, o.dilation_h = 0;
  EXPECT_CORUN_ERROR(g.conv2d(x, g.param("w3", {4, 6, 3, 3}), Tensor(), o), Status::invalid_argument,
                     "dilation >= 1");
  Conv2dOptions t;
  t.output_padding_h = 1;  // stride 1, dilation 1: no room for output padding
  EXPECT_CORUN_ERROR(g.conv_transpose2d(x, g.param("w4", {6, 2, 3, 3}), Tensor(), t), Status::invalid_argument,
                     "conv_transpose2d", "output padding");
  t.output_padding_h = 0;
  EXPECT_CORUN_ERROR(g.conv_transpose2d(x, g.param("w5", {6, 2, 3, 3}), g.param("b5", {6}), t),
                     Status::invalid_argument, "the bias must be [C_out]");
  Pool2dOptions p;
  p.kernel_h = 2, p.kernel_w = 3, p.pad_left = 3;
  EXPECT_CORUN_ERROR(g.max_pool(x, p), Status::invalid_argument, "max_pool", "0 <= pad < window", "(left)");
  EXPECT_CORUN_ERROR(g.global_avg_pool(g.input("flat", {2, 6})), Status::invalid_argument, "must be 4-D");
}

TEST(ConvPoolOps, GradientNodes) {
  Graph g;
  const Tensor x = g.param("x", {2, 4, 3, 3});
  Conv2dOptions o;
  o.stride_h = o.stride_w = 2;
  const Tensor y = g.conv_transpose2d(x, g.param("w", {4, 2, 3, 3}), g.param("b", {2}), o);
  const Tensor z = g.conv2d(y, g.param("w2", {4, 2, 1, 1}), Tensor(), Conv2dOptions{});
  g.backward(g.reduce_sum(z));
  auto n = count_kinds(g);
  EXPECT_EQ(n[OpKind::conv2d], 2) << "the transpose's dX is a convolution";
  EXPECT_EQ(n[OpKind::conv2d_grad_filter], 2);
  EXPECT_EQ(n[OpKind::conv2d_grad_data], 1);
  EXPECT_EQ(n[OpKind::conv_transpose2d_grad_bias], 1);
}

}  // namespace
