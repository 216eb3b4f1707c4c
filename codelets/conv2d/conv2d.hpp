// conv2d: 2-D convolution over NCHW tensors (cross-correlation, as every DL framework defines it), ONNX
// Conv / PyTorch Conv2d: per-axis strides and dilations, asymmetric zero padding, groups and an optional
// per-output-channel bias.
//
//   conv2d              buffers X [N,C,H,W], W [K,C/G,R,S] (, B [K]) -> Y [N,K,OH,OW]
//   conv2d_grad_data    buffers dY [N,K,OH,OW], W [K,C/G,R,S] -> dX [N,C,H,W]
//   conv2d_grad_filter  buffers X [N,C,H,W], dY [N,K,OH,OW] -> dW [K,C/G,R,S] (, dB [K])
//   conv_transpose2d    buffers X [N,K,OH,OW], W [K,C/G,R,S] (, B [C]) -> Y [N,C,H,W]: conv2d_grad_data
//                       plus a bias (ONNX ConvTranspose with X's channels as K, Y's as C)
//   conv_transpose2d_grad_bias  buffers dY [N,C,H,W] -> dB [C] (sum over images and positions)
//
// Attributes (ConvParams::of): i[0] stride_h, i[1] pad_top; when i[4] == 0 that is all (the square form
// every call had before: the same stride and padding on both axes, dilation 1, one group), else i[4]
// stride_w, i[5] pad_left, i[6] pad_bottom, i[7] pad_right, i[8] dilation_h, i[9] dilation_w, i[10] groups.
// Calls of the square form keep their attributes, and so their footprints and recorded models.
// conv2d only: i[11] a fused activation of the output (ConvActivation; Graph::fuse_conv_activation, inference
// graphs), i[12] and i[13] clip's lo and hi as float bits. conv2d and its two gradients: i[14] and i[15] the
// channel block of the input side's layout (X, or dX) and of the output side's (Y, or dY) (0 plain NCHW, else
// nChw<B>c; Graph::block_layouts, conv_layout.hpp). Zero everywhere else.
//
// With G groups, output channel k of group k / (K/G) reads input channels [g C/G, (g+1) C/G) only, and
//   Y[n,k,oh,ow] = B[k] + sum_{c,r,s} W[k,c,r,s] X[n, g C/G + c, oh*sh - pt + r*dh, ow*sw - pl + s*dw]
// (X outside the image is zero), OH = (H + pt + pb - dh (R-1) - 1) / sh + 1 (floor), likewise OW.
// Forward and backward-data split the batch (whole images per member); backward-filter sums over the batch,
// so it splits output channels instead: every member computes whole dW[k] and dB[k] rows and the sum over
// images runs in one fixed order at every width.
#pragma once

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"
#include "codelets/op.hpp"
#include "codelets/unary_math/unary_math.hpp"

namespace corun::codelets {

void conv2d_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_fast(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_data_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_data_fast(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_filter_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_filter_fast(const OpCall& call, float* const* buf, int rank, int width);
void conv_transpose2d_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv_transpose2d_fast(const OpCall& call, float* const* buf, int rank, int width);
void conv_transpose2d_grad_bias_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv_transpose2d_grad_bias_fast(const OpCall& call, float* const* buf, int rank, int width);

/// The window attributes of a conv call, decoded (see the header comment for the encoding).
struct ConvParams {
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1, groups = 1;

  static ConvParams of(const OpCall& call) { return of(call.i); }
  static ConvParams of(const std::array<int64_t, kMaxIntAttrs>& i) {
    if (i[4] == 0) return ConvParams{i[0], i[0], i[1], i[1], i[1], i[1], 1, 1, 1};
    return ConvParams{i[0], i[4], i[1], i[5], i[6], i[7], i[8], i[9], i[10]};
  }
  /// The attributes of these parameters: the square form when it says everything.
  std::array<int64_t, kMaxIntAttrs> attrs() const {
    std::array<int64_t, kMaxIntAttrs> i{};
    i[0] = stride_h;
    i[1] = pad_top;
    const bool square = stride_w == stride_h && pad_left == pad_top && pad_bottom == pad_top &&
                        pad_right == pad_top && dilation_h == 1 && dilation_w == 1 && groups == 1;
    if (square) return i;
    i[4] = stride_w;
    i[5] = pad_left;
    i[6] = pad_bottom;
    i[7] = pad_right;
    i[8] = dilation_h;
    i[9] = dilation_w;
    i[10] = groups;
    return i;
  }
};

/// The activation a conv2d applies to its own output (i[11]; Graph::fuse_conv_activation folds a relu, clip,
/// hard_swish or hard_sigmoid that alone reads the convolution's output into it, at inference). The same
/// formulas as those ops (codelets/elementwise.hpp), so the fused graph computes the unfused graph's bits: the
/// fast ones in the fast kernels, the reference ones in the reference kernel (they differ for hard_swish and
/// hard_sigmoid). Every kernel applies it to the outputs it has just written, while they are in cache: one task
/// and one pass over the activations fewer than a separate op. clip's lo, hi and hard_sigmoid's alpha, beta
/// travel as float bits in i[12], i[13].
enum class ConvActivation : int64_t { none = 0, relu = 1, clip = 2, hard_swish = 3, hard_sigmoid = 4 };
inline constexpr int kConvActivationAttr = 11;

struct ConvEpilogue {
  ConvActivation kind = ConvActivation::none;
  float lo = 0.0f, hi = 0.0f;

  static ConvEpilogue of(const OpCall& call) {
    if (call.kind != OpKind::conv2d) return {};
    const auto kind = static_cast<ConvActivation>(call.i[kConvActivationAttr]);
    if (!two_floats(kind)) return {kind};
    return {kind, float_from_attr_bits(call.i[kConvActivationAttr + 1]),
            float_from_attr_bits(call.i[kConvActivationAttr + 2])};
  }
  /// Whether `kind` carries two floats (clip's lo and hi, hard_sigmoid's alpha and beta).
  static bool two_floats(ConvActivation kind) {
    return kind == ConvActivation::clip || kind == ConvActivation::hard_sigmoid;
  }
  /// The attributes that select `kind` (and clip's bounds, or hard_sigmoid's alpha and beta as lo and hi) on a
  /// conv2d call.
  static void set(std::array<int64_t, kMaxIntAttrs>& i, ConvActivation kind, float lo = 0.0f, float hi = 0.0f) {
    i[kConvActivationAttr] = static_cast<int64_t>(kind);
    i[kConvActivationAttr + 1] = two_floats(kind) ? float_attr_bits(lo) : 0;
    i[kConvActivationAttr + 2] = two_floats(kind) ? float_attr_bits(hi) : 0;
  }
  bool any() const { return kind != ConvActivation::none; }
  /// y[0..count) = activation(y), in place; `ref`: the reference formulas (the reference kernel's).
  void apply(float* y, int64_t count, bool ref = false) const {
    const float l = lo, h = hi;
    switch (kind) {
      case ConvActivation::none: return;
      case ConvActivation::relu: return in_place([](float v) { return ew::relu_fast(v); }, y, count);
      case ConvActivation::clip: return in_place([l, h](float v) { return ew::clip_fast(v, l, h); }, y, count);
      case ConvActivation::hard_swish:
        if (ref) return in_place([](float v) { return ew::hard_swish_ref(v); }, y, count);
        return in_place([](float v) { return ew::hard_swish_fast(v); }, y, count);
      case ConvActivation::hard_sigmoid:
        if (ref) return in_place([l, h](float v) { return ew::hard_sigmoid_ref(v, l, h); }, y, count);
        return in_place([l, h](float v) { return ew::hard_sigmoid_fast(v, l, h); }, y, count);
    }
  }
  /// In blocks of ew::kBlock with a known trip count, as the elementwise kernels (elementwise_kernels.hpp):
  /// GCC -O2 vectorises only those. A plain loop ran ResNet-50's fused ReLUs 5x slower than the relu op.
  template <class F>
  static void in_place(F f, float* y, int64_t n) {
    int64_t e = 0;
    for (; e + ew::kBlock <= n; e += ew::kBlock)
      for (int j = 0; j < ew::kBlock; ++j) y[e + j] = f(y[e + j]);
    for (; e < n; ++e) y[e] = f(y[e]);
  }
  /// The images [n0, n0 + mb) of channels [k0, k0 + kt) of an [N, K, P] output: one contiguous run per image.
  void apply(float* y, int64_t k, int64_t p, int64_t n0, int64_t mb, int64_t k0, int64_t kt) const {
    if (!any()) return;
    for (int64_t n = n0; n < n0 + mb; ++n) apply(y + (n * k + k0) * p, kt * p);
  }
};

/// Everything a conv kernel needs: extents from the shapes, the window from the attributes. `c` and `k` are
/// the whole channel counts; cg and kg those of one group.
struct ConvGeometry {
  int64_t n, c, h, w, k, r, s, oh, ow;
  int64_t sh, sw, pt, pl, dh, dw, groups;
  int64_t cg() const { return c / groups; }
  int64_t kg() const { return k / groups; }
  int64_t p() const { return oh * ow; }
  int64_t crs() const { return cg() * r * s; }  ///< one group's column rows

  /// `x` the input-side [N,C,H,W], `wt` the filters, `y` the output-side [N,K,OH,OW].
  static ConvGeometry of(const OpCall& call, const Shape& x, const Shape& wt, const Shape& y) {
    const ConvParams p = ConvParams::of(call);
    return ConvGeometry{x[0],       x[1],       x[2],       x[3],       wt[0],        wt[2],        wt[3],
                        y[2],       y[3],       p.stride_h, p.stride_w, p.pad_top,    p.pad_left,   p.dilation_h,
                        p.dilation_w, p.groups};
  }
};

/// A 1x1 stride-1 unpadded convolution reads the image itself as its column matrix.
inline bool identity_cols(const ConvGeometry& g) {
  return g.r == 1 && g.s == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 && g.oh == g.h && g.ow == g.w;
}

/// A convolution with one input channel per group (depthwise) runs the fast path's direct loops in all three
/// passes: im2col would copy each plane R*S times to feed sgemms of one row (forward, backward-filter) or one
/// column (backward-data). Not for the 1x1 stride-1 unpadded case, whose columns are the image itself.
inline bool direct_depthwise(const ConvGeometry& g) { return g.cg() == 1 && g.groups > 1 && !identity_cols(g); }

/// Output extent of a convolution or pooling window sweep: (in + 2 pad - window) / stride + 1, or 0 when the
/// window does not fit.
inline int64_t window_out_extent(int64_t in, int64_t window, int64_t stride, int64_t pad) {
  const int64_t span = in + 2 * pad - window;
  return span < 0 ? 0 : span / stride + 1;
}

/// Output channels per backward-filter tile: the fast kernel's split unit, fixed so that every tile is
/// the same sgemm call at every team width.
inline constexpr int64_t kConvFilterTile = 8;

}  // namespace corun::codelets
