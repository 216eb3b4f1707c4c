// graphs/ops/window.hpp — shape checks shared by the sliding-window ops (conv2d, max_pool, avg_pool).
#pragma once

#include "graphs/ops/rules.hpp"

namespace corun::graphs {

inline void check_nchw(const ShapeQuery& q, const char* what, const Shape& s) {
  if (s.rank != 4) q.fail(std::string(what) + " must be 4-D [N, C, H, W], got " + s.str());
}

/// Output extent of a window sliding over `in` positions (padded by `pad` on both sides).
inline int64_t out_extent(const ShapeQuery& q, const Shape& x, int64_t in, int64_t window, int64_t stride,
                          int64_t pad) {
  const int64_t span = in + 2 * pad - window;
  if (span < 0)
    q.fail("a window of " + std::to_string(window) + " with padding " + std::to_string(pad) +
           " does not fit the input " + x.str() + "; use a smaller window or more padding");
  return span / stride + 1;
}

}  // namespace corun::graphs
