// graphs/ops/window.hpp — shape checks shared by the sliding-window ops (conv2d, conv_transpose2d,
// max_pool, avg_pool).
#pragma once

#include "graphs/ops/rules.hpp"

namespace corun::graphs {

inline void check_nchw(const ShapeQuery& q, const char* what, const Shape& s) {
  if (s.rank != 4) q.fail(std::string(what) + " must be 4-D [N, C, H, W], got " + s.str());
}

/// Output extent of a window sliding over `in` positions padded by `pad_begin` and `pad_end`: floor, or
/// with `ceil` the ONNX / PyTorch ceil_mode rule (the last window must start inside the input or the
/// leading padding).
inline int64_t out_extent(const ShapeQuery& q, const Shape& x, int64_t in, int64_t window, int64_t stride,
                          int64_t pad_begin, int64_t pad_end, bool ceil = false) {
  const int64_t span = in + pad_begin + pad_end - window;
  if (span < 0)
    q.fail("a window of " + std::to_string(window) + " with padding " + std::to_string(pad_begin) + " + " +
           std::to_string(pad_end) + " does not fit the input " + x.str() + "; use a smaller window or more padding");
  if (!ceil) return span / stride + 1;
  int64_t out = (span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= in + pad_begin) --out;
  return out;
}

/// The same with padding `pad` on both sides (the square form).
inline int64_t out_extent(const ShapeQuery& q, const Shape& x, int64_t in, int64_t window, int64_t stride,
                          int64_t pad) {
  return out_extent(q, x, in, window, stride, pad, pad);
}

}  // namespace corun::graphs
