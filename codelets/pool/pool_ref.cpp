// Reference pooling kernels: windows checked position by position; the backward kernels gather, for each
// dX element, from every output window that covers it (the fast kernels scatter instead).
#include "codelets/pool/pool.hpp"

#include <algorithm>
#include <limits>

namespace corun::codelets {
namespace {

// Input position (ih, iw) of window tap (r, s) of output (oh, ow), or false when it is padding.
bool tap(const PoolGeometry& g, int64_t oh, int64_t ow, int64_t r, int64_t s, int64_t& ih, int64_t& iw) {
  ih = oh * g.sh - g.pt + r;
  iw = ow * g.sw - g.pl + s;
  return ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
}

// Index in the plane of the first maximum of window (oh, ow) (by max_pool_takes, as every kernel: its last NaN
// if it holds one), -1 if the window is all padding.
int64_t argmax(const PoolGeometry& g, const float* plane, int64_t oh, int64_t ow) {
  int64_t best = -1;
  float best_v = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < g.kh; ++r)
    for (int64_t s = 0; s < g.kw; ++s) {
      int64_t ih, iw;
      if (!tap(g, oh, ow, r, s, ih, iw)) continue;
      const float v = plane[ih * g.w + iw];
      if (best < 0 || max_pool_takes(v, best_v)) {
        best = ih * g.w + iw;
        best_v = v;
      }
    }
  return best;
}

// The divisor of window (oh, ow): its taps inside the image, or inside the padded image with
// count_include_pad.
int64_t count(const PoolGeometry& g, int64_t oh, int64_t ow) {
  int64_t n = 0;
  for (int64_t r = 0; r < g.kh; ++r)
    for (int64_t s = 0; s < g.kw; ++s) {
      int64_t ih, iw;
      const bool inside = tap(g, oh, ow, r, s, ih, iw);
      const bool padded = ih >= -g.pt && ih < g.h + g.pb && iw >= -g.pl && iw < g.w + g.pr;
      n += (g.include_pad ? padded : inside) ? 1 : 0;
    }
  return n;
}

// Calls f(oh, ow) for every output window that covers input (ih, iw).
// Only outputs o with o*stride - pad <= i < o*stride - pad + kernel can cover input i.
int64_t first_cover(int64_t i, int64_t pad, int64_t kernel, int64_t stride) {
  const int64_t lo = i + pad - kernel + 1;
  return lo <= 0 ? 0 : (lo + stride - 1) / stride;
}

template <class F>
void covering(const PoolGeometry& g, int64_t ih, int64_t iw, F f) {
  const int64_t oh_end = std::min(g.oh, (ih + g.pt) / g.sh + 1);
  const int64_t ow_end = std::min(g.ow, (iw + g.pl) / g.sw + 1);
  for (int64_t oh = first_cover(ih, g.pt, g.kh, g.sh); oh < oh_end; ++oh)
    for (int64_t ow = first_cover(iw, g.pl, g.kw, g.sw); ow < ow_end; ++ow) {
      const int64_t r = ih - (oh * g.sh - g.pt), s = iw - (ow * g.sw - g.pl);
      if (r >= 0 && r < g.kh && s >= 0 && s < g.kw) f(oh, ow);
    }
}

}  // namespace

void max_pool_ref(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return pool_via_plain(&max_pool_ref, call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        const float* plane = buf[0] + p * g.h * g.w;
        const int64_t a = argmax(g, plane, oh, ow);
        buf[1][(p * g.oh + oh) * g.ow + ow] = a < 0 ? 0.0f : plane[a];
      }
}

void max_pool_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return pool_via_plain(&max_pool_grad_ref, call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p) {
    const float* plane = buf[0] + p * g.h * g.w;
    for (int64_t ih = 0; ih < g.h; ++ih)
      for (int64_t iw = 0; iw < g.w; ++iw) {
        double acc = 0.0;
        covering(g, ih, iw, [&](int64_t oh, int64_t ow) {
          if (argmax(g, plane, oh, ow) == ih * g.w + iw) acc += buf[1][(p * g.oh + oh) * g.ow + ow];
        });
        buf[2][p * g.h * g.w + ih * g.w + iw] = static_cast<float>(acc);
      }
  }
}

void avg_pool_ref(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return pool_via_plain(&avg_pool_ref, call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        double acc = 0.0;
        for (int64_t r = 0; r < g.kh; ++r)
          for (int64_t s = 0; s < g.kw; ++s) {
            int64_t ih, iw;
            if (tap(g, oh, ow, r, s, ih, iw)) acc += buf[0][(p * g.h + ih) * g.w + iw];
          }
        const int64_t n = count(g, oh, ow);
        buf[1][(p * g.oh + oh) * g.ow + ow] = n == 0 ? 0.0f : static_cast<float>(acc / static_cast<double>(n));
      }
}

void avg_pool_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return pool_via_plain(&avg_pool_grad_ref, call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[1], call.shapes[0]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p)
    for (int64_t ih = 0; ih < g.h; ++ih)
      for (int64_t iw = 0; iw < g.w; ++iw) {
        double acc = 0.0;
        covering(g, ih, iw, [&](int64_t oh, int64_t ow) {
          acc += static_cast<double>(buf[0][(p * g.oh + oh) * g.ow + ow]) / static_cast<double>(count(g, oh, ow));
        });
        buf[1][(p * g.h + ih) * g.w + iw] = static_cast<float>(acc);
      }
}

}  // namespace corun::codelets
