// Op cases of the general convolution and pooling forms (issue 19): per-axis strides, asymmetric pads,
// dilation, groups (depthwise with and without channel multiplier), no bias, conv_transpose2d and its bias
// gradient, ceil-mode windows and count_include_pad. The square forms stay in op_cases.cpp.
#include "op_cases.hpp"

#include "codelets/conv2d/conv2d.hpp"
#include "codelets/conv2d/conv_layout.hpp"
#include "codelets/pool/pool.hpp"

#include <string>
#include <utility>

namespace corun::codelets::testing {
namespace {

constexpr Access R = Access::read;
constexpr Access W = Access::write;

int64_t conv_extent(int64_t in, int64_t r, int64_t stride, int64_t pb, int64_t pe, int64_t dil) {
  return (in + pb + pe - dil * (r - 1) - 1) / stride + 1;
}

struct ConvCase {
  const char* name;
  int64_t n, c, h, w, k, r, s;
  ConvParams p;
  bool bias;
};

void conv_general_cases(std::vector<OpCaseSpec>& out) {
  const ConvCase cases[] = {
      {"strides_2x1_pads_1021", 2, 3, 7, 6, 5, 3, 2, {2, 1, 1, 0, 2, 1, 1, 1, 1}, true},
      {"dilated_2x3", 3, 2, 9, 10, 4, 3, 3, {1, 1, 2, 3, 2, 3, 2, 3, 1}, true},
      {"groups_2", 2, 4, 6, 5, 6, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 2}, true},
      {"groups_3_tiles", 2, 6, 5, 5, 27, 3, 1, {2, 1, 1, 0, 1, 0, 1, 1, 3}, true},  // 9 filters per group
      {"depthwise", 3, 5, 8, 7, 5, 3, 3, {2, 2, 1, 1, 1, 1, 1, 1, 5}, true},
      {"depthwise_mult2_nobias", 2, 4, 6, 6, 8, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 4}, false},
      // Rows of 21 and 20 output columns: the direct depthwise kernels' 8-lane blocks and their tails.
      {"depthwise_wide_rows", 2, 6, 5, 21, 6, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 6}, true},
      {"depthwise_s2_dilated", 2, 4, 9, 40, 4, 3, 3, {2, 2, 2, 2, 2, 2, 2, 2, 4}, false},
      {"1x1_groups_nobias", 2, 6, 4, 5, 4, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 2}, false},
      {"nonsquare_1x7", 1, 3, 5, 9, 2, 1, 7, {1, 1, 0, 3, 0, 3, 1, 1, 1}, true},
      // Blocked X and Y below: dilated, so that the automatic choice runs im2col on plain copies.
      {"dilated_c16_k16", 3, 16, 7, 6, 16, 3, 3, {1, 1, 2, 2, 2, 2, 2, 2, 1}, true},
  };
  for (const ConvCase& q : cases) {
    const ConvParams& p = q.p;
    const int64_t oh = conv_extent(q.h, q.r, p.stride_h, p.pad_top, p.pad_bottom, p.dilation_h);
    const int64_t ow = conv_extent(q.w, q.s, p.stride_w, p.pad_left, p.pad_right, p.dilation_w);
    const Shape x{q.n, q.c, q.h, q.w}, wt{q.k, q.c / p.groups, q.r, q.s}, b{q.k}, y{q.n, q.k, oh, ow};
    const auto a = p.attrs();
    const std::string name = q.name;
    if (q.bias) {
      out.push_back(make("conv2d_" + name, OpKind::conv2d, {x, wt, b, y}, {R, R, R, W}, a));
      out.push_back(make("conv2d_grad_filter_" + name, OpKind::conv2d_grad_filter, {x, y, wt, b}, {R, R, W, W}, a));
    } else {
      out.push_back(make("conv2d_" + name, OpKind::conv2d, {x, wt, y}, {R, R, W}, a));
      out.push_back(make("conv2d_grad_filter_" + name, OpKind::conv2d_grad_filter, {x, y, wt}, {R, R, W}, a));
    }
    out.push_back(make("conv2d_grad_data_" + name, OpKind::conv2d_grad_data, {y, wt, x}, {R, R, W}, a));
    // A fused activation (Graph::fuse_conv_activation) on the forward of some geometries: relu, a clip to
    // [-0.5, 0.5] whose both bounds bite, hard_swish, hard_sigmoid with alpha -0.5 and beta 0.5.
    const std::pair<const char*, ConvActivation> fused[] = {
      {"strides_2x1_pads_1021", ConvActivation::relu}, {"depthwise", ConvActivation::clip},
      {"depthwise_mult2_nobias", ConvActivation::relu}, {"strides_2x1_pads_1021", ConvActivation::hard_swish},
      {"depthwise", ConvActivation::hard_sigmoid}};
    const char* suffixes[] = {"", "_relu", "_clip", "_hard_swish", "_hard_sigmoid"};  // by ConvActivation
    for (const auto& [geometry, act] : fused) {
      if (std::string(geometry) != q.name) continue;
      auto af = a;
      ConvEpilogue::set(af, act, -0.5f, 0.5f);
      const std::string suffix = suffixes[static_cast<int>(act)];
      if (q.bias) out.push_back(make("conv2d_" + name + suffix, OpKind::conv2d, {x, wt, b, y}, {R, R, R, W}, af));
      else out.push_back(make("conv2d_" + name + suffix, OpKind::conv2d, {x, wt, y}, {R, R, W}, af));
    }
    // Graph::block_layouts's nChw8c on both sides (conv_layout.hpp): the kernels that only know NCHW run on plain
    // copies of a member's images; with relu, since the fused activation then runs on the copy.
    if (std::string(q.name) == "dilated_c16_k16") {
      auto al = a;
      ConvEpilogue::set(al, ConvActivation::relu);
      ConvLayouts::set(al, 8, 8);
      out.push_back(make("conv2d_" + name + "_blocked8_relu", OpKind::conv2d, {x, wt, b, y}, {R, R, R, W}, al));
      auto ag = a;
      ConvLayouts::set(ag, 8, 8);
      out.push_back(make("conv2d_grad_data_" + name + "_blocked8", OpKind::conv2d_grad_data, {y, wt, x}, {R, R, W}, ag));
      out.push_back(make("conv2d_grad_filter_" + name + "_blocked8", OpKind::conv2d_grad_filter, {x, y, wt, b},
                         {R, R, W, W}, ag));
    }
    // The transposed convolution of the same geometry: X is the convolution's Y, Y its X.
    const Shape bt{q.c};
    if (q.bias)
      out.push_back(make("conv_transpose2d_" + name, OpKind::conv_transpose2d, {y, wt, bt, x}, {R, R, R, W}, a));
    else
      out.push_back(make("conv_transpose2d_" + name, OpKind::conv_transpose2d, {y, wt, x}, {R, R, W}, a));
    out.push_back(make("conv_transpose2d_grad_bias_" + name, OpKind::conv_transpose2d_grad_bias, {x, bt}, {R, W}, {}));
  }
}

struct PoolCase {
  const char* name;
  int64_t n, c, h, w;
  PoolParams p;
};

int64_t pool_extent(int64_t in, int64_t k, int64_t stride, int64_t pb, int64_t pe, bool ceil) {
  const int64_t span = in + pb + pe - k;
  if (!ceil) return span / stride + 1;
  int64_t out = (span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= in + pb) --out;
  return out;
}

void pool_general_cases(std::vector<OpCaseSpec>& out) {
  const PoolCase cases[] = {
      {"k3x2_s2x1_pads_1001", 2, 3, 7, 6, {3, 2, 2, 1, 1, 0, 0, 1, false, false}},
      {"ceil_k3s2", 2, 2, 8, 9, {3, 3, 2, 2, 0, 0, 0, 0, true, false}},
      {"ceil_k3s2_p1_include_pad", 3, 2, 6, 7, {3, 3, 2, 2, 1, 1, 1, 1, true, true}},
      {"include_pad_k3s1p1", 2, 3, 5, 5, {3, 3, 1, 1, 1, 1, 1, 1, false, true}},
      {"ceil_k2s3_asym", 1, 4, 10, 7, {2, 3, 3, 2, 1, 0, 0, 2, true, true}},
      {"global_5x7", 2, 3, 5, 7, {5, 7, 1, 1, 0, 0, 0, 0, false, false}},
      // rows of 19 and 33 outputs: the fast max pool's vector blocks of 16, a tail, the last row's fallback
      {"wide_k3s2_p1", 2, 3, 20, 37, {3, 3, 2, 2, 1, 1, 1, 1, false, false}},
      {"wide_k2s2", 1, 2, 8, 66, {2, 2, 2, 2, 0, 0, 0, 0, false, false}},
  };
  for (const PoolCase& q : cases) {
    const PoolParams& p = q.p;
    const Shape x{q.n, q.c, q.h, q.w},
        y{q.n, q.c, pool_extent(q.h, p.kernel_h, p.stride_h, p.pad_top, p.pad_bottom, p.ceil_mode),
          pool_extent(q.w, p.kernel_w, p.stride_w, p.pad_left, p.pad_right, p.ceil_mode)};
    const auto a = p.attrs();
    const std::string name = q.name;
    out.push_back(make("max_pool_" + name, OpKind::max_pool, {x, y}, {R, W}, a));
    out.push_back(make("max_pool_grad_" + name, OpKind::max_pool_grad, {x, y, x}, {R, R, W}, a));
    out.push_back(make("avg_pool_" + name, OpKind::avg_pool, {x, y}, {R, W}, a));
    out.push_back(make("avg_pool_grad_" + name, OpKind::avg_pool_grad, {y, x}, {R, W}, a));
  }
  // Max and average pooling in oneDNN's blocked layouts (Graph::block_layouts, max_pool_blocked.cpp,
  // avg_pool_blocked.cpp): nChw16c and nChw8c, several channel blocks per image (a member's share of block-planes
  // straddles images), padding, ceil mode, count_include_pad.
  struct BlockedPool {
    PoolCase q;
    int64_t block;
  };
  const BlockedPool blocked[] = {
      {{"same_k3s1p1", 3, 32, 8, 8, {3, 3, 1, 1, 1, 1, 1, 1, false, false}}, 16},
      {{"ceil_k3s2", 2, 48, 9, 9, {3, 3, 2, 2, 0, 0, 0, 0, true, false}}, 16},
      {{"k3x2_s2x1_pads_1001", 2, 24, 7, 6, {3, 2, 2, 1, 1, 0, 0, 1, false, false}}, 8},
      {{"global_4x4", 5, 16, 4, 4, {4, 4, 1, 1, 0, 0, 0, 0, false, false}}, 16},
      {{"ceil_k3s2_p1_incl", 2, 32, 8, 7, {3, 3, 2, 2, 1, 1, 1, 1, true, true}}, 16},
  };
  for (const BlockedPool& b : blocked) {
    const PoolParams& p = b.q.p;
    const Shape x{b.q.n, b.q.c, b.q.h, b.q.w},
        y{b.q.n, b.q.c, pool_extent(b.q.h, p.kernel_h, p.stride_h, p.pad_top, p.pad_bottom, p.ceil_mode),
          pool_extent(b.q.w, p.kernel_w, p.stride_w, p.pad_left, p.pad_right, p.ceil_mode)};
    auto a = p.attrs();
    a[kPoolBlockAttr] = b.block;
    const std::string name = std::string(b.q.name) + "_blocked" + std::to_string(b.block);
    out.push_back(make("max_pool_" + name, OpKind::max_pool, {x, y}, {R, W}, a));
    out.push_back(make("max_pool_grad_" + name, OpKind::max_pool_grad, {x, y, x}, {R, R, W}, a));
    out.push_back(make("avg_pool_" + name, OpKind::avg_pool, {x, y}, {R, W}, a));
    out.push_back(make("avg_pool_grad_" + name, OpKind::avg_pool_grad, {y, x}, {R, W}, a));
  }
}

}  // namespace

std::vector<OpCaseSpec> conv_pool_op_cases() {
  std::vector<OpCaseSpec> out;
  conv_general_cases(out);
  pool_general_cases(out);
  return out;
}

}  // namespace corun::codelets::testing
