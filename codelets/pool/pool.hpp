// Max and average pooling over NCHW tensors: square windows, the same stride and zero padding in both
// spatial dimensions, floor output size (OH = (H + 2 pad - kernel) / stride + 1).
//
//   max_pool       buffers X [N,C,H,W] -> Y [N,C,OH,OW]          i[0] kernel, i[1] stride, i[2] pad
//   max_pool_grad  buffers X, dY [N,C,OH,OW] -> dX [N,C,H,W]     (same attributes)
//   avg_pool       buffers X -> Y
//   avg_pool_grad  buffers dY -> dX
//
// Max pooling ignores padded positions; a window's gradient goes to its first maximum in row-major window
// order (ties to the first max), recomputed from X, so the backward is deterministic. Average pooling
// divides by the number of window positions inside the image (padding is not counted). Every kernel
// splits whole (n, c) planes between members: a plane's gradient accumulations stay in one member, in one
// order, at every width.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void max_pool_ref(const OpCall& call, float* const* buf, int rank, int width);
void max_pool_fast(const OpCall& call, float* const* buf, int rank, int width);
void max_pool_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void max_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_ref(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_fast(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void avg_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

/// Pooling window geometry of a call; `x` is the input-side shape, `y` the output-side shape.
struct PoolGeometry {
  int64_t planes, h, w, oh, ow, kernel, stride, pad;

  static PoolGeometry of(const OpCall& call, const Shape& x, const Shape& y) {
    return PoolGeometry{x[0] * x[1], x[2], x[3], y[2], y[3], call.i[0], call.i[1], call.i[2]};
  }
  /// Window of output row `o` clamped to the image: [first, last) input rows (likewise for columns).
  static void clamp(int64_t o, int64_t stride, int64_t pad, int64_t kernel, int64_t extent, int64_t& first,
                    int64_t& last) {
    first = o * stride - pad;
    last = first + kernel;
    if (first < 0) first = 0;
    if (last > extent) last = extent;
  }
};

/// The clamped input window [h0, h1) x [w0, w1) of every output (oh, ow) of one plane, in output order:
/// f(oh, ow, h0, h1, w0, w1).
template <class F>
void for_each_window(const PoolGeometry& g, F&& f) {
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    int64_t h0, h1;
    PoolGeometry::clamp(oh, g.stride, g.pad, g.kernel, g.h, h0, h1);
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      int64_t w0, w1;
      PoolGeometry::clamp(ow, g.stride, g.pad, g.kernel, g.w, w0, w1);
      f(oh, ow, h0, h1, w0, w1);
    }
  }
}

}  // namespace corun::codelets
