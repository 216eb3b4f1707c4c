// The oneDNN convolution kernels' per-thread cache (codelets/conv2d/conv2d_dnnl.cpp): primitives, blocked
// buffers and reorders are made once per shape and slice and reused, so a second call on the same shapes
// with other inputs must compute from those inputs, not from what the blocked buffers kept of the first
// call. The op harness runs every width on the same inputs and cannot see that; this test can.
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_impls.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace corun::codelets {
namespace {

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

class DnnlConvCache : public ::testing::Test {
 protected:
  void SetUp() override {
    const ConvGeometry probe{1, 8, 3, 3, 8, 1, 1, 3, 3, 1, 1, 0, 0, 1, 1, 1};
    if (!dnnl_conv_supported(probe))
      GTEST_SKIP() << "oneDNN convolutions unavailable (built without libdnnl-dev, or a CPU without AVX2)";
  }
};

// 9 images (chunks of 4, 4, 1), 40 filters (tiles of 16, 16, 8): every pass twice, on new inputs each time,
// against the reference kernels; width 1 and 2 teams (members run one after the other).
TEST_F(DnnlConvCache, EveryCallComputesFromItsOwnInputs) {
  const Shape x{9, 8, 7, 6}, wt{40, 8, 3, 3}, b{40}, y{9, 40, 7, 6};
  auto call = [&](OpKind kind, std::vector<Shape> shapes) {
    OpCall c;
    c.kind = kind;
    c.shapes = std::move(shapes);
    c.modes.assign(c.shapes.size(), Access::read);
    c.i[0] = 1;  // stride 1
    c.i[1] = 1;  // pad 1
    choose_conv_impl(c, ConvKernel::dnnl);  // oneDNN, as CORUN_CONV_KERNEL=dnnl has the plan step choose
    return c;
  };
  const OpCall fwd = call(OpKind::conv2d, {x, wt, b, y});
  const OpCall data = call(OpKind::conv2d_grad_data, {y, wt, x});
  const OpCall filt = call(OpKind::conv2d_grad_filter, {x, y, wt, b});
  for (int width : {1, 2})
    for (unsigned round = 0; round < 2; ++round) {
      SCOPED_TRACE("width " + std::to_string(width) + ", round " + std::to_string(round));
      std::vector<float> xv = random_values(static_cast<size_t>(x.numel()), 10 + round),
                         wv = random_values(static_cast<size_t>(wt.numel()), 20 + round),
                         bv = random_values(static_cast<size_t>(b.numel()), 30 + round),
                         dyv = random_values(static_cast<size_t>(y.numel()), 40 + round);
      std::vector<float> y_fast(dyv.size()), y_ref(dyv.size()), dx_fast(xv.size()), dx_ref(xv.size()),
          dw_fast(wv.size()), dw_ref(wv.size()), db_fast(bv.size()), db_ref(bv.size());
      float* f_fast[] = {xv.data(), wv.data(), bv.data(), y_fast.data()};
      float* f_ref[] = {xv.data(), wv.data(), bv.data(), y_ref.data()};
      float* d_fast[] = {dyv.data(), wv.data(), dx_fast.data()};
      float* d_ref[] = {dyv.data(), wv.data(), dx_ref.data()};
      float* w_fast[] = {xv.data(), dyv.data(), dw_fast.data(), db_fast.data()};
      float* w_ref[] = {xv.data(), dyv.data(), dw_ref.data(), db_ref.data()};
      for (int rank = 0; rank < width; ++rank) {
        conv2d_fast(fwd, f_fast, rank, width);
        conv2d_grad_data_fast(data, d_fast, rank, width);
        conv2d_grad_filter_fast(filt, w_fast, rank, width);
      }
      conv2d_ref(fwd, f_ref, 0, 1);
      conv2d_grad_data_ref(data, d_ref, 0, 1);
      conv2d_grad_filter_ref(filt, w_ref, 0, 1);
      EXPECT_LT(max_abs_diff(y_fast, y_ref), 1e-4);
      EXPECT_LT(max_abs_diff(dx_fast, dx_ref), 1e-4);
      EXPECT_LT(max_abs_diff(dw_fast, dw_ref), 1e-3);
      EXPECT_LT(max_abs_diff(db_fast, db_ref), 1e-3);
    }
}

// CORUN_CONV_KERNEL=auto's choice per pass (use_dnnl_conv, the rule bench/conv_kernels.sh measured): oneDNN
// for forward and backward-filter from 8 output channels at any input channel count, backward-data from 3
// input channels; dilated windows and fewer than 8 output channels stay on im2col. The choice never reads
// the width, so every team width runs the same kernel. Depthwise convolutions: oneDNN (its jit_dw kernels).
TEST(DnnlConvAuto, ChoosesPerShapeAndPassAsMeasured) {
  const ConvGeometry probe{1, 8, 3, 3, 8, 1, 1, 3, 3, 1, 1, 0, 0, 1, 1, 1};
  if (!dnnl_conv_supported(probe))
    GTEST_SKIP() << "oneDNN convolutions unavailable (built without libdnnl-dev, or a CPU without AVX2)";
  // n, c, h, w, k, r, s, oh, ow, sh, sw, pt, pl, dh, dw, groups
  const ConvGeometry cifar_conv1{64, 1, 28, 28, 32, 5, 5, 28, 28, 1, 1, 2, 2, 1, 1, 1};
  const ConvGeometry pathnet_l0{64, 3, 32, 32, 16, 3, 3, 32, 32, 1, 1, 1, 1, 1, 1, 1};
  const ConvGeometry pathnet_l1{64, 16, 16, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1};
  const ConvGeometry few_filters{64, 16, 16, 16, 4, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1};
  const ConvGeometry dilated{64, 16, 16, 16, 16, 3, 3, 12, 12, 1, 1, 0, 0, 2, 2, 1};
  const OpKind fwd = OpKind::conv2d, data = OpKind::conv2d_grad_data, filt = OpKind::conv2d_grad_filter;
  for (const ConvGeometry& g : {cifar_conv1, pathnet_l0}) {
    EXPECT_TRUE(use_dnnl_conv(g, fwd));
    EXPECT_TRUE(use_dnnl_conv(g, filt));
  }
  EXPECT_FALSE(use_dnnl_conv(cifar_conv1, data));  // one input channel
  EXPECT_TRUE(use_dnnl_conv(pathnet_l0, data));    // three
  for (OpKind pass : {fwd, data, filt}) {
    EXPECT_TRUE(use_dnnl_conv(pathnet_l1, pass));
    EXPECT_FALSE(use_dnnl_conv(few_filters, pass));
    EXPECT_FALSE(use_dnnl_conv(dilated, pass));
  }
  // Depthwise: every pass, except backward-filter with an input smaller than the window; other groupings
  // stay on im2col.
  const ConvGeometry depthwise{16, 144, 16, 16, 144, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 144};
  const ConvGeometry depthwise_2x2{16, 960, 2, 2, 960, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 960};
  const ConvGeometry grouped{16, 64, 8, 8, 64, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 4};
  for (OpKind pass : {fwd, data, filt}) {
    EXPECT_TRUE(use_dnnl_conv(depthwise, pass));
    EXPECT_EQ(use_dnnl_conv(depthwise_2x2, pass), pass != filt);
    EXPECT_FALSE(use_dnnl_conv(grouped, pass));
  }
  // Winograd (winograd_declines): 3x3 "same" from 32 channels in whole blocks on maps of 16x16 and more, batches of
  // more than one image chunk, where oneDNN has the kernels (AVX-512: its 16-channel blocks); never under
  // `direct` or `im2col`.
  const bool wino_kernels = dnnl_channel_block() == 16;
  const ConvGeometry googlenet_stem2{32, 64, 16, 16, 192, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1};
  const ConvGeometry on_8x8{32, 128, 8, 8, 192, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1};
  const ConvGeometry one_chunk{4, 64, 16, 16, 192, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1};
  const ConvGeometry stride2{32, 64, 32, 32, 128, 3, 3, 16, 16, 2, 2, 1, 1, 1, 1, 1};
  const ConvGeometry c24{32, 24, 16, 16, 64, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1};
  for (OpKind pass : {fwd, data, filt}) {
    EXPECT_EQ(winograd_declines(googlenet_stem2, pass, ConvKernel::auto_).empty(), wino_kernels);
    for (const ConvGeometry& g : {pathnet_l1, on_8x8, one_chunk, stride2, c24, depthwise})
      EXPECT_FALSE(winograd_declines(g, pass, ConvKernel::auto_).empty());
  }
  EXPECT_TRUE(use_dnnl_conv(googlenet_stem2, fwd, ConvKernel::direct));
  EXPECT_EQ(winograd_declines(googlenet_stem2, fwd, ConvKernel::direct), "CORUN_CONV_KERNEL=direct");
  EXPECT_EQ(winograd_declines(googlenet_stem2, fwd, ConvKernel::im2col), "CORUN_CONV_KERNEL=im2col");
  EXPECT_FALSE(use_dnnl_conv(pathnet_l1, fwd, ConvKernel::im2col));
  EXPECT_TRUE(use_dnnl_conv(cifar_conv1, data, ConvKernel::dnnl));
}

// The list itself (conv_impls.hpp): each call runs the first entry that takes it, and every entry before it says
// why it declined. The same geometry gets the same choice under the same preference, whatever the width.
TEST(ConvImplList, TheFirstEntryThatTakesACallRunsItAndTheOthersSayWhy) {
  const ConvGeometry probe{1, 8, 3, 3, 8, 1, 1, 3, 3, 1, 1, 0, 0, 1, 1, 1};
  const bool onednn = dnnl_conv_supported(probe);
  // n, c, h, w, k, r, s, oh, ow, sh, sw, pt, pl, dh, dw, groups
  const ConvGeometry cifar_conv1{64, 1, 28, 28, 32, 5, 5, 28, 28, 1, 1, 2, 2, 1, 1, 1};
  const ConvChoice data = choose_conv(cifar_conv1, OpKind::conv2d_grad_data, ConvKernel::auto_);
  EXPECT_EQ(data.impl, ConvImpl::im2col);
  ASSERT_EQ(data.declined.size(), 4u);  // both oneDNN layouts, Winograd and the depthwise loops
  EXPECT_STREQ(data.declined[0].first, "onednn-winograd");
  EXPECT_STREQ(data.declined[3].first, "direct");
  if (onednn) {
    EXPECT_NE(data.declined[2].second.find("fewer than 3 input channels"), std::string::npos);
  }
  const ConvChoice forced = choose_conv(cifar_conv1, OpKind::conv2d_grad_data, ConvKernel::dnnl);
  EXPECT_EQ(forced.impl, onednn ? ConvImpl::onednn : ConvImpl::im2col);
  const ConvGeometry one_by_one{16, 32, 16, 16, 64, 1, 1, 16, 16, 1, 1, 0, 0, 1, 1, 1};
  EXPECT_EQ(choose_conv(one_by_one, OpKind::conv2d, ConvKernel::auto_).impl,
            onednn ? ConvImpl::onednn_plain : ConvImpl::im2col);
  EXPECT_EQ(choose_conv(one_by_one, OpKind::conv2d_grad_filter, ConvKernel::auto_).impl,
            onednn ? ConvImpl::onednn : ConvImpl::im2col);
  const ConvGeometry depthwise_2x2{16, 960, 2, 2, 960, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 960};
  EXPECT_EQ(choose_conv(depthwise_2x2, OpKind::conv2d_grad_filter, ConvKernel::auto_).impl, ConvImpl::direct);
  EXPECT_EQ(choose_conv(depthwise_2x2, OpKind::conv2d, ConvKernel::im2col).impl, ConvImpl::direct);
  // A call keeps what was chosen for it; an unchosen one gets the choice under auto.
  OpCall call;
  call.kind = OpKind::conv2d;
  call.shapes = {{16, 32, 16, 16}, {64, 32, 1, 1}, {16, 64, 16, 16}};
  call.modes = {Access::read, Access::read, Access::write};
  call.i = ConvParams{}.attrs();  // stride 1, no padding, one group
  EXPECT_EQ(conv_impl_of(call), onednn ? ConvImpl::onednn_plain : ConvImpl::im2col);
  choose_conv_impl(call, ConvKernel::im2col);
  EXPECT_EQ(conv_impl_of(call), ConvImpl::im2col);
  EXPECT_FALSE(call_uses_dnnl_conv(call));
}

}  // namespace
}  // namespace corun::codelets
