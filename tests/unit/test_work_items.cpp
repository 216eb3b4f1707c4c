// codelets/work_items.hpp: the balanced work items of a call's fast kernel, the widest team it can use. The
// counts must be the kernels' own cuts: a convolution at batch 1 on im2col is one image (one item), on oneDNN its
// output channels cut into up to 16 tiles; a product's tiles; a pooling's planes; a batch norm's channels.
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/matmul/matmul.hpp"
#include "codelets/work_items.hpp"

#include <gtest/gtest.h>

namespace corun::codelets {
namespace {

OpCall conv_call(int64_t n, int64_t c, int64_t k, int64_t hw) {
  OpCall call;
  call.kind = OpKind::conv2d;
  call.shapes = {{n, c, hw, hw}, {k, c, 3, 3}, {n, k, hw, hw}};
  call.modes = {Access::read, Access::read, Access::write};
  call.i = ConvParams{1, 1, 1, 1, 1, 1, 1, 1, 1}.attrs();
  return call;
}

TEST(WorkItems, AConvolutionAtBatchOneOnIm2colIsOneItem) {
  OpCall call = conv_call(1, 64, 512, 14);
  choose_conv_impl(call, ConvKernel::im2col);
  EXPECT_EQ(work_items(call), 1);
  EXPECT_EQ(useful_width(call, 64), 1);
  call = conv_call(6, 64, 512, 14);
  choose_conv_impl(call, ConvKernel::im2col);
  EXPECT_EQ(useful_width(call, 64), 6);  // whole images
}

TEST(WorkItems, OneDnnCutsABatchOfOneIntoChannelTiles) {
  OpCall call = conv_call(1, 64, 512, 14);
  choose_conv_impl(call, ConvKernel::dnnl);
  if (!is_onednn(conv_impl_of(call))) GTEST_SKIP() << "no oneDNN convolutions here";
  EXPECT_EQ(work_items(call), conv_work_items());  // 512 channels: 32 blocks of 16 in up to 16 tiles
  EXPECT_EQ(useful_width(call, 4), 4);             // and never above the op's own cap
}

TEST(WorkItems, ProductsPoolsAndBatchNormsCountTheirOwnCuts) {
  OpCall mm;
  mm.kind = OpKind::matmul;
  mm.shapes = {{64, 256}, {256, 512}, {64, 512}};
  EXPECT_EQ(work_items(mm), matmul_tiling(64, 512).count);
  OpCall pool;
  pool.kind = OpKind::max_pool;
  pool.shapes = {{2, 3, 8, 8}, {2, 3, 4, 4}};
  EXPECT_EQ(work_items(pool), 6);  // (image, channel) planes
  OpCall bn;
  bn.kind = OpKind::batch_norm;
  bn.shapes = {{4, 5, 2, 2}};
  EXPECT_EQ(work_items(bn), 5);  // channels
  OpCall relu;
  relu.kind = OpKind::relu;
  relu.shapes = {{3, 7}, {3, 7}};
  EXPECT_EQ(work_items(relu), 0);  // not known: the op's max width holds
  EXPECT_EQ(useful_width(relu, 8), 8);
}

}  // namespace
}  // namespace corun::codelets
