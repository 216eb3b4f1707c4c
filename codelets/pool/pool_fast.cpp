// Fast pooling kernels: windows clamped to the image once per output row and column (no per-tap bounds
// checks); the backward kernels zero a dX plane and scatter each output's gradient into it in output
// order. Whole planes per member (pool.hpp). Max pooling takes the outputs whose windows need no column
// clamping in blocks of adjacent outputs, branch-free.
#include "codelets/pool/pool.hpp"

#include "codelets/simd_clones.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace corun::codelets {

namespace {

// Max pooling compares taps with `v > best`, the first tap taken as it is, in row-major window order: the
// reference's rule (a leading NaN stays, a later one is skipped; of equal maxima, -0 and +0 included, the
// first wins). Written as a select rather than a branch: on random data the branch of the old kernel
// mispredicted about every other tap (15 ms for CIFAR-quick's first pool at batch 128, one thread, against
// its 2.4 ms convolution); the select compiles to a max or blend, and a block of adjacent outputs to vectors.

// Adjacent outputs of one row handled together as one vector (GCC's vector extension: one AVX-512
// register, two AVX2 or four SSE registers), their taps loaded at the window stride.
constexpr int64_t kPoolBlock = 16;
using Floats = float __attribute__((vector_size(kPoolBlock * sizeof(float))));
using Ints = int32_t __attribute__((vector_size(kPoolBlock * sizeof(int32_t))));

// v = p[0], p[sw], ..., p[15 sw]; reads nothing past p[15 sw]. (An out-parameter: a vector returned by value
// would have another ABI in the baseline copy than in the AVX-512 one.)
template <int64_t SW>
inline void load_strided(const float* p, int64_t sw, Floats& v) {
  if constexpr (SW == 1) {
    std::memcpy(&v, p, sizeof v);
  } else if constexpr (SW == 2) {
    Floats a, b;  // p[0..15] and p[15..30]: the even elements of both, without reading p[31]
    std::memcpy(&a, p, sizeof a);
    std::memcpy(&b, p + 15, sizeof b);
    v = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
  } else {
    for (int64_t j = 0; j < kPoolBlock; ++j) v[j] = p[j * sw];
  }
}

// The outputs [lo, hi) of a row whose windows lie inside the image's columns (no clamping).
struct InteriorColumns {
  int64_t lo, hi;
  static InteriorColumns of(const PoolGeometry& g) {
    const int64_t lo = std::min(g.ow, (g.pl + g.sw - 1) / g.sw);  // first ow with ow*sw - pl >= 0
    const int64_t last = g.w + g.pl - g.kw;                         // ow*sw <= w + pl - kw
    const int64_t hi = last < 0 ? 0 : std::min(g.ow, last / g.sw + 1);
    return {lo, std::max(lo, hi)};
  }
};

// The clamped window [h0, h1) x [w0, w1) of one output: its first maximum's index in the plane, -1 when the
// window holds no input (all padding).
int64_t argmax_clamped(const PoolGeometry& g, const float* plane, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
  if (h0 >= h1 || w0 >= w1) return -1;
  int64_t at = h0 * g.w + w0;
  float best = plane[at];
  for (int64_t ih = h0; ih < h1; ++ih)
    for (int64_t iw = w0; iw < w1; ++iw) {
      const bool greater = plane[ih * g.w + iw] > best;
      best = greater ? plane[ih * g.w + iw] : best;
      at = greater ? ih * g.w + iw : at;
    }
  return at;
}

// One output row of a max pool, its outputs [lo, hi) (the windows inside the image's columns; rows [h0, h1)
// clamped, h0 < h1): with Out = float their maxima into `out` (the Y row), with Out = int64_t their first
// maxima's indices in the plane (the backward). `end` is the end of the whole X buffer. SW: the column stride
// when it is 1 or 2, else 0 (read from g). A row shorter than a block (CIFAR-quick's 13 outputs) still runs as
// one block whose extra lanes read the next row's floats and are dropped, wherever that stays inside X; the
// outputs a block cannot take go one by one through argmax_clamped.
template <int64_t SW, class Out>
void max_row_interior(const PoolGeometry& g, const float* plane, int64_t h0, int64_t h1, int64_t lo, int64_t hi,
                      const float* end, Out* out) {
  constexpr bool kArgmax = std::is_same_v<Out, int64_t>;
  const int64_t sw = SW > 0 ? SW : g.sw;
  const int64_t nrows = h1 - h0;
  const int64_t reach = (nrows - 1) * g.w + g.kw + (kPoolBlock - 1) * sw;  // floats a block reads from its base
  const float* rows = plane + h0 * g.w;
  int64_t ow = lo;
  for (; ow < hi; ow += kPoolBlock) {
    const float* base = rows + ow * sw - g.pl;
    const int64_t n = std::min(kPoolBlock, hi - ow);
    if (n < kPoolBlock && reach > end - base) break;
    Floats best, v;
    load_strided<SW>(base, sw, best);
    Ints at{};  // each output's tap offset from its window's first tap (kArgmax)
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t s = 0; s < g.kw; ++s) {
        load_strided<SW>(base + r * g.w + s, sw, v);
        if constexpr (kArgmax) {
          const Ints greater = v > best;
          best = greater ? v : best;
          at = greater ? Ints{} + static_cast<int32_t>(r * g.w + s) : at;
        } else {
          best = v > best ? v : best;
        }
      }
    if constexpr (kArgmax)
      for (int64_t j = 0; j < n; ++j) out[ow + j] = (base - plane) + j * sw + at[j];
    else
      std::memcpy(out + ow, &best, static_cast<size_t>(n) * sizeof(float));
  }
  for (; ow < hi; ++ow) {
    const int64_t w0 = ow * sw - g.pl;
    const int64_t at = argmax_clamped(g, plane, h0, h1, w0, w0 + g.kw);
    if constexpr (kArgmax) out[ow] = at;
    else out[ow] = plane[at];
  }
}

// Calls max_row_interior with the stride as a constant for the common strides, so the
// block's loads are a fixed pattern the compiler vectorises.
template <class F>
void with_stride(int64_t sw, F&& f) {
  if (sw == 1) f(std::integral_constant<int64_t, 1>{});
  else if (sw == 2) f(std::integral_constant<int64_t, 2>{});
  else f(std::integral_constant<int64_t, 0>{});
}

// Every output row of one plane: the interior columns at once (interior(oh, h0, h1, lo, hi)), the clamped
// ones at both ends one by one (edge(oh, ow, h0, h1, w0, w1)), then row_done(oh).
template <class Interior, class Edge, class RowDone>
void for_each_row(const PoolGeometry& g, const InteriorColumns& cols, Interior&& interior, Edge&& edge,
                  RowDone&& row_done) {
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    int64_t h0, h1;
    PoolGeometry::clamp(oh, g.sh, g.pt, g.kh, g.h, h0, h1);
    auto clamped = [&](int64_t ow) {
      int64_t w0, w1;
      PoolGeometry::clamp(ow, g.sw, g.pl, g.kw, g.w, w0, w1);
      edge(oh, ow, h0, h1, w0, w1);
    };
    for (int64_t ow = 0; ow < cols.lo; ++ow) clamped(ow);
    if (h0 < h1) interior(oh, h0, h1, cols.lo, cols.hi);
    else
      for (int64_t ow = cols.lo; ow < cols.hi; ++ow) clamped(ow);
    for (int64_t ow = cols.hi; ow < g.ow; ++ow) clamped(ow);
    row_done(oh);
  }
}

}  // namespace

CORUN_SIMD_CLONES void max_pool_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const InteriorColumns cols = InteriorColumns::of(g);
  const Range planes = split_range(g.planes, rank, width);
  const float* end = buf[0] + g.planes * g.h * g.w;
  with_stride(g.sw, [&](auto sw) {
    for (int64_t p = planes.begin; p < planes.end; ++p) {
      const float* plane = buf[0] + p * g.h * g.w;
      float* out = buf[1] + p * g.oh * g.ow;
      for_each_row(
          g, cols,
          [&](int64_t oh, int64_t h0, int64_t h1, int64_t lo, int64_t hi) {
            max_row_interior<decltype(sw)::value>(g, plane, h0, h1, lo, hi, end, out + oh * g.ow);
          },
          [&](int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
            const int64_t at = argmax_clamped(g, plane, h0, h1, w0, w1);
            out[oh * g.ow + ow] = at < 0 ? 0.0f : plane[at];
          },
          [](int64_t) {});
    }
  });
}

CORUN_SIMD_CLONES void max_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const InteriorColumns cols = InteriorColumns::of(g);
  const Range planes = split_range(g.planes, rank, width);
  const float* end = buf[0] + g.planes * g.h * g.w;
  std::vector<int64_t> arg(static_cast<size_t>(g.ow));
  with_stride(g.sw, [&](auto sw) {
    for (int64_t p = planes.begin; p < planes.end; ++p) {
      const float* plane = buf[0] + p * g.h * g.w;
      const float* dy = buf[1] + p * g.oh * g.ow;
      float* dx = buf[2] + p * g.h * g.w;
      std::fill_n(dx, g.h * g.w, 0.0f);
      // Each row's argmaxes first (vectorised), then its gradients scattered in output order: the order of
      // the sums into dX that overlapping windows share, the same at every width.
      for_each_row(
          g, cols,
          [&](int64_t, int64_t h0, int64_t h1, int64_t lo, int64_t hi) {
            max_row_interior<decltype(sw)::value>(g, plane, h0, h1, lo, hi, end, arg.data());
          },
          [&](int64_t, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
            arg[ow] = argmax_clamped(g, plane, h0, h1, w0, w1);
          },
          [&](int64_t oh) {
            for (int64_t ow = 0; ow < g.ow; ++ow)
              if (arg[ow] >= 0) dx[arg[ow]] += dy[oh * g.ow + ow];
          });
    }
  });
}

void avg_pool_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p) {
    const float* plane = buf[0] + p * g.h * g.w;
    float* out = buf[1] + p * g.oh * g.ow;
    for_each_window(g, [&](int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      float sum = 0.0f;
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) sum += plane[ih * g.w + iw];
      const int64_t n = g.include_pad ? g.padded_count(oh, ow)
                                      : std::max<int64_t>(0, h1 - h0) * std::max<int64_t>(0, w1 - w0);
      out[oh * g.ow + ow] = n == 0 ? 0.0f : sum / static_cast<float>(n);
    });
  }
}

void avg_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[1], call.shapes[0]);
  const Range planes = split_range(g.planes, rank, width);
  for (int64_t p = planes.begin; p < planes.end; ++p) {
    const float* dy = buf[0] + p * g.oh * g.ow;
    float* dx = buf[1] + p * g.h * g.w;
    std::fill_n(dx, g.h * g.w, 0.0f);
    for_each_window(g, [&](int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      const int64_t n = g.include_pad ? g.padded_count(oh, ow)
                                      : std::max<int64_t>(0, h1 - h0) * std::max<int64_t>(0, w1 - w0);
      if (n == 0) return;
      const float share = dy[oh * g.ow + ow] / static_cast<float>(n);
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) dx[ih * g.w + iw] += share;
    });
  }
}

}  // namespace corun::codelets
