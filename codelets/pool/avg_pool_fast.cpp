// Fast average pooling kernels: windows clamped to the image once per output (no per-tap bounds checks);
// the backward zeroes a dX plane and adds each output's share into it in output order. Whole planes per
// member (pool.hpp); blocked activations go to avg_pool_blocked.cpp.
#include "codelets/pool/pool.hpp"

#include <algorithm>
#include <cstdint>

namespace corun::codelets {

void avg_pool_fast(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return avg_pool_blocked(call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p) {
    const float* plane = buf[0] + p * g.h * g.w;
    float* out = buf[1] + p * g.oh * g.ow;
    for_each_window(g, [&](int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      float sum = 0.0f;
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) sum += plane[ih * g.w + iw];
      const int64_t n = g.average_count(oh, ow, h0, h1, w0, w1);
      out[oh * g.ow + ow] = n == 0 ? 0.0f : sum / static_cast<float>(n);
    });
  }
}

void avg_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return avg_pool_grad_blocked(call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[1], call.shapes[0]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p) {
    const float* dy = buf[0] + p * g.oh * g.ow;
    float* dx = buf[1] + p * g.h * g.w;
    std::fill_n(dx, g.h * g.w, 0.0f);
    for_each_window(g, [&](int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      const int64_t n = g.average_count(oh, ow, h0, h1, w0, w1);
      if (n == 0) return;
      const float share = dy[oh * g.ow + ow] / static_cast<float>(n);
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) dx[ih * g.w + iw] += share;
    });
  }
}

}  // namespace corun::codelets
