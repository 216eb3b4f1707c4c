// reduce_axes kernels. X is viewed right-aligned in kMaxDims dimensions; Y (in keepdims layout) has
// extent 1 along the reduced ones. The fast kernel runs the innermost reduced run as a contiguous loop
// when the last dimension is reduced (the global-average-pool and row-sum cases).
#include "codelets/reduce_axes/reduce_axes.hpp"

#include "codelets/broadcast/broadcast.hpp"

#include <algorithm>
#include <array>

namespace corun::codelets {
namespace {

using Ext = std::array<int64_t, kMaxDims>;

struct Layout {
  Ext x;        ///< X's padded extents
  Ext y;        ///< Y's (keepdims) extents
  Ext xstride;  ///< X's strides
  Ext ystride;  ///< Y's strides along X's dims (0 along reduced ones)
};

Layout layout_of(const Shape& sx, int64_t mask) {
  Layout l;
  l.x = padded_extents(sx);
  const int shift = kMaxDims - sx.rank;
  for (size_t d = 0; d < kMaxDims; ++d) {
    const int xd = static_cast<int>(d) - shift;
    const bool reduced = xd >= 0 && ((mask >> xd) & 1) != 0;
    l.y[d] = reduced ? 1 : l.x[d];
  }
  int64_t sxs = 1, sys = 1;
  for (int d = kMaxDims - 1; d >= 0; --d) {
    const auto k = static_cast<size_t>(d);
    l.xstride[k] = sxs;
    l.ystride[k] = l.y[k] == 1 ? 0 : sys;
    sxs *= l.x[k];
    sys *= l.y[k];
  }
  return l;
}

// Y[e] for e in this member's range: the reduction over the dims where Y has extent 1 and X does not, in
// X's index order (the innermost dimension fastest).
template <class Acc>
void reduce(const OpCall& call, float* const* buf, int rank, int width) {
  const Layout l = layout_of(call.shapes[0], call.i[0]);
  const float* x = buf[0];
  Ext lo{}, hi{};
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const Ext yi = unravel(e, l.y);
    int64_t base = 0;
    for (size_t d = 0; d < kMaxDims; ++d) {
      const bool spread = l.y[d] == 1 && l.x[d] > 1;
      lo[d] = spread ? 0 : yi[d];
      hi[d] = spread ? l.x[d] : yi[d] + 1;
      base += lo[d] * l.xstride[d];
    }
    Acc acc = 0;
    const int64_t run = hi[3] - lo[3];  // the innermost dimension has stride 1
    for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
      for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1)
        for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
          const float* p = x + i0 * l.xstride[0] + i1 * l.xstride[1] + i2 * l.xstride[2] + lo[3];
          for (int64_t t = 0; t < run; ++t) acc += static_cast<Acc>(p[t]);
        }
    buf[1][e] = static_cast<float>(static_cast<Acc>(call.f) * acc);
  }
}

// dX[e] = f * dY[e's kept indices].
void broadcast_back(const OpCall& call, float* const* buf, int rank, int width) {
  const Layout l = layout_of(call.shapes[1], call.i[0]);
  const float f = call.f;
  const Range r = split_range(numel(call, 1), rank, width, 16);
  const int64_t last = l.x[kMaxDims - 1];
  const int64_t ts = l.ystride[kMaxDims - 1];
  for (int64_t e = r.begin; e < r.end;) {
    const Ext xi = unravel(e, l.x);
    int64_t o = 0;
    for (size_t d = 0; d < kMaxDims; ++d) o += xi[d] * l.ystride[d];
    const int64_t len = std::min(last - xi[kMaxDims - 1], r.end - e);
    const float* dy = buf[0] + o;
    float* dx = buf[1] + e;
    for (int64_t t = 0; t < len; ++t) dx[t] = f * dy[t * ts];
    e += len;
  }
}

}  // namespace

void reduce_axes_ref(const OpCall& call, float* const* buf, int rank, int width) {
  reduce<double>(call, buf, rank, width);
}
void reduce_axes_fast(const OpCall& call, float* const* buf, int rank, int width) {
  reduce<float>(call, buf, rank, width);
}
// One multiplication per element: the reference is the same computation.
void reduce_axes_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  broadcast_back(call, buf, rank, width);
}
void reduce_axes_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  broadcast_back(call, buf, rank, width);
}

}  // namespace corun::codelets
