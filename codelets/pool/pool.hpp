// Max and average pooling over NCHW tensors (ONNX MaxPool / AveragePool, PyTorch MaxPool2d / AvgPool2d):
// per-axis windows and strides, asymmetric zero padding, floor or ceil output size.
//
//   max_pool       buffers X [N,C,H,W] -> Y [N,C,OH,OW]
//   max_pool_grad  buffers X, dY [N,C,OH,OW] -> dX [N,C,H,W]
//   avg_pool       buffers X -> Y
//   avg_pool_grad  buffers dY -> dX
//
// Attributes (PoolParams::of): i[0] kernel_h, i[1] stride_h, i[2] pad_top; when i[4] == 0 that is all (the
// square form: the same window, stride and padding on both axes, floor size, padding not counted), else
// i[4] kernel_w, i[5] stride_w, i[6] pad_left, i[7] pad_bottom, i[8] pad_right, i[9] ceil_mode,
// i[10] count_include_pad. i[11] the channel block of the activations' layout (0 plain NCHW, else oneDNN's
// nChw<B>c, every buffer alike; Graph::block_layouts, max_pool_blocked.cpp, avg_pool_blocked.cpp). The kernels
// take OH and OW from the shapes; ceil_mode matters to the shape rule
// only (OH = ceil((H + pt + pb - kh) / sh) + 1, less one when that last window would start past the input
// and its top padding: the ONNX and PyTorch rule).
//
// Max pooling ignores padded positions; a window's gradient goes to its first maximum in row-major window
// order (ties to the first max), recomputed from X, so the backward is deterministic; a window holding NaN
// gives NaN and its gradient goes to its last NaN (max_pool_takes, PyTorch's rule). Average pooling
// divides by the number of window positions inside the image, or with count_include_pad by the positions
// inside the padded image [-pt, H + pb) x [-pl, W + pr) (PyTorch's rule for a ceil-mode window that runs
// past the padding). Every kernel splits whole (n, c) planes between members: a plane's gradient
// accumulations stay in one member, in one order, at every width.
#pragma once

#include "codelets/blocked_layout.hpp"
#include "codelets/op.hpp"

#include <algorithm>
#include <cstdint>

namespace corun::codelets {

void max_pool_ref(const OpCall& call, float* const* buf, int rank, int width);
void max_pool_fast(const OpCall& call, float* const* buf, int rank, int width);
void max_pool_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void max_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width);
/// max_pool / max_pool_grad on blocked activations (i[11] != 0): native (max_pool_blocked.cpp), and the
/// reference's way, `kernel` (a plain kernel) on plain copies of the member's block-planes.
void max_pool_blocked(const OpCall& call, float* const* buf, int rank, int width);
void max_pool_grad_blocked(const OpCall& call, float* const* buf, int rank, int width);
void pool_via_plain(Kernel kernel, const OpCall& call, float* const* buf, int rank, int width);

/// The max pools' rule, one for every kernel (scalar and vector, plain and blocked): tap v replaces the
/// window's running maximum `best` when it is greater or NaN, PyTorch's `val > maxval || isnan(val)`. So a
/// NaN anywhere in a window makes its output NaN (the window's last NaN, payload included) and its gradient
/// goes to that NaN, as in PyTorch; `v > best` alone skipped a NaN after the window's first tap.
inline bool max_pool_takes(float v, float best) { return v > best || v != v; }
/// The same on GCC vectors: `take` gets the lane mask (an out-parameter, as a vector returned by value warns
/// of an ABI that depends on the ISA flags, -Wpsabi). With kMayHoldNan false, `v > best` alone: the same
/// choice on taps without NaN, and a select GCC compiles to a max, while with the NaN test, as
/// `(v > best) | (v != v)` or as `~(v <= best) & (best == best)`, it gave the max up (max_pool 4.5 -> 37 ms,
/// max_pool_grad 10.5 -> 43 ms per PathNet small step, 2-core Xeon; commit 50cac92). So the vector kernels take
/// a plane without the test, summing its taps as they load them (one vector add a tap), and take it again with
/// the test only when a sum is NaN: a NaN tap makes it NaN; infinities of both signs too, a false alarm that
/// costs time only, as both rules give the same bits on taps without NaN.
template <bool kMayHoldNan, class Floats, class Ints>
inline void max_pool_takes(const Floats& v, const Floats& best, Ints& take) {
  if constexpr (kMayHoldNan)
    take = (v > best) | (v != v);
  else
    take = v > best;
}

/// Whether any lane of a vector mask is set (a plane's `sum != sum` lanes, above).
template <class Ints>
inline bool max_pool_any_lane(const Ints& mask) {
  int32_t any = 0;
  for (size_t j = 0; j < sizeof mask / sizeof mask[0]; ++j) any |= mask[j];
  return any != 0;
}

inline constexpr int kPoolBlockAttr = 11;
/// Whether `k` is one of the pooling ops (the ones that take i[kPoolBlockAttr]).
inline bool is_pool(OpKind k) {
  return k == OpKind::max_pool || k == OpKind::max_pool_grad || k == OpKind::avg_pool || k == OpKind::avg_pool_grad;
}
/// The channel block of a pooling call's layout: 0 for plain NCHW.
inline int64_t pool_block(const OpCall& call) { return is_pool(call.kind) ? call.i[kPoolBlockAttr] : 0; }

void avg_pool_ref(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_fast(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width);
/// avg_pool / avg_pool_grad on blocked activations (i[11] != 0; avg_pool_blocked.cpp); the references take
/// pool_via_plain.
void avg_pool_blocked(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_grad_blocked(const OpCall& call, float* const* buf, int rank, int width);

/// The window attributes of a pooling call, decoded (see the header comment for the encoding).
struct PoolParams {
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool ceil_mode = false, count_include_pad = false;

  static PoolParams of(const std::array<int64_t, kMaxIntAttrs>& i) {
    if (i[4] == 0) return PoolParams{i[0], i[0], i[1], i[1], i[2], i[2], i[2], i[2], false, false};
    return PoolParams{i[0], i[4], i[1], i[5], i[2], i[6], i[7], i[8], i[9] != 0, i[10] != 0};
  }
  /// The attributes of these parameters: the square form when it says everything.
  std::array<int64_t, kMaxIntAttrs> attrs() const {
    std::array<int64_t, kMaxIntAttrs> i{};
    i[0] = kernel_h;
    i[1] = stride_h;
    i[2] = pad_top;
    const bool square = kernel_w == kernel_h && stride_w == stride_h && pad_left == pad_top &&
                        pad_bottom == pad_top && pad_right == pad_top && !ceil_mode && !count_include_pad;
    if (square) return i;
    i[4] = kernel_w;
    i[5] = stride_w;
    i[6] = pad_left;
    i[7] = pad_bottom;
    i[8] = pad_right;
    i[9] = ceil_mode ? 1 : 0;
    i[10] = count_include_pad ? 1 : 0;
    return i;
  }
};

/// Pooling window geometry of a call; `x` is the input-side shape, `y` the output-side shape.
struct PoolGeometry {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr;
  bool include_pad;

  static PoolGeometry of(const OpCall& call, const Shape& x, const Shape& y) {
    const PoolParams p = PoolParams::of(call.i);
    return PoolGeometry{x[0] * x[1], x[2],         x[3],         y[2],         y[3],
                        p.kernel_h,  p.kernel_w,   p.stride_h,   p.stride_w,   p.pad_top,
                        p.pad_left,  p.pad_bottom, p.pad_right,  p.count_include_pad};
  }
  /// Window of output row `o` clamped to the image: [first, last) input rows (likewise for columns).
  static void clamp(int64_t o, int64_t stride, int64_t pad, int64_t kernel, int64_t extent, int64_t& first,
                    int64_t& last) {
    first = o * stride - pad;
    last = first + kernel;
    if (first < 0) first = 0;
    if (last > extent) last = extent;
  }
  /// Positions of window (oh, ow) that count_include_pad counts: those inside the padded image.
  int64_t padded_count(int64_t out_row, int64_t out_col) const {
    const int64_t h0 = out_row * sh - pt, w0 = out_col * sw - pl;
    return (std::min(h0 + kh, h + pb) - h0) * (std::min(w0 + kw, w + pr) - w0);
  }
  /// The divisor of average pooling for window (oh, ow) clamped to [h0, h1) x [w0, w1): its positions inside
  /// the padded image with count_include_pad, else those inside the image.
  int64_t average_count(int64_t out_row, int64_t out_col, int64_t h0, int64_t h1, int64_t w0, int64_t w1) const {
    return include_pad ? padded_count(out_row, out_col)
                       : std::max<int64_t>(0, h1 - h0) * std::max<int64_t>(0, w1 - w0);
  }
};

/// The clamped input window [h0, h1) x [w0, w1) of every output (oh, ow) of one plane, in output order:
/// f(oh, ow, h0, h1, w0, w1).
template <class F>
void for_each_window(const PoolGeometry& g, F&& f) {
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    int64_t h0, h1;
    PoolGeometry::clamp(oh, g.sh, g.pt, g.kh, g.h, h0, h1);
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      int64_t w0, w1;
      PoolGeometry::clamp(ow, g.sw, g.pl, g.kw, g.w, w0, w1);
      f(oh, ow, h0, h1, w0, w1);
    }
  }
}

}  // namespace corun::codelets
