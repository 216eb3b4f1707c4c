// Fast max pooling kernels: branch-free, in blocks of 16 outputs (one vector), windows clamped to the image
// once per output row; the backward zeroes a dX plane and scatters each output's gradient into it in output
// order. Whole planes per member (pool.hpp). Two ways to fill a block: adjacent outputs of one row (row
// mode), or consecutive outputs of whole small planes (plane mode, for rows of a few outputs).
#include "codelets/pool/pool.hpp"

#include "codelets/simd_clones.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace corun::codelets {

namespace {

// Max pooling compares taps with max_pool_takes (greater or NaN, pool.hpp), the first tap taken as it is, in
// row-major window order: the reference's rule (a window's last NaN wins; of equal maxima, -0 and +0 included,
// the first wins). Written as a select rather than a branch: on random data the branch of the old kernel
// mispredicted about every other tap (15 ms for CIFAR-quick's first pool at batch 128, one thread, against its
// 2.4 ms convolution); the select compiles to a max or blend, and a block of adjacent outputs to vectors. The max
// only without the NaN test, so a plane (or group of planes) runs first without it (kNan false), summing its
// taps on the way, and again with it only when a sum is NaN (a tap may be NaN): the same bits either way
// (pool.hpp, max_pool_takes). Summing the taps as they are loaded, not checking the plane before: a second pass
// over a 32x32 plane made PathNet's 2x2 pools 1.3-1.5x slower.

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
    const int64_t last = g.w + g.pl - g.kw;                       // ow*sw <= w + pl - kw
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
      const bool greater = max_pool_takes(plane[ih * g.w + iw], best);
      best = greater ? plane[ih * g.w + iw] : best;
      at = greater ? ih * g.w + iw : at;
    }
  return at;
}

// One output row of a max pool, all its outputs (rows [h0, h1) of the window clamped, h0 < h1): with
// Out = float their maxima into `out` (the Y row), with Out = int64_t their first maxima's indices in the plane,
// -1 for a window of padding only (the backward). [x, end) is the whole X buffer. SW: the column stride when it
// is 1 or 2, else 0 (read from g). Blocks of 16 adjacent outputs; a block whose windows all lie inside the
// image's columns compares every tap, one at the row's edges only the taps of its lanes that are inside
// (inside_columns' masks: padding is never compared, so the first tap inside is taken as it is). A row
// shorter than a block (CIFAR-quick's 13 outputs) still runs as one block whose extra lanes read the next
// row's floats and are dropped; a block whose reads would leave X (the first or last rows of X) goes one by one through
// argmax_clamped.
template <int64_t SW, bool kNan, class Out>
void max_row(const PoolGeometry& g, const InteriorColumns& cols, const std::vector<int32_t>& inside_columns,
             const float* plane, int64_t h0, int64_t h1, const float* x, const float* end, Out* out, Ints& nan) {
  constexpr bool kArgmax = std::is_same_v<Out, int64_t>;
  const int64_t sw = SW > 0 ? SW : g.sw;
  const int64_t nrows = h1 - h0;
  const int64_t reach = (nrows - 1) * g.w + g.kw + (kPoolBlock - 1) * sw;  // floats a block reads from its base
  const float* rows = plane + h0 * g.w;
  for (int64_t ow = 0; ow < g.ow; ow += kPoolBlock) {
    const float* base = rows + ow * sw - g.pl;
    const int64_t n = std::min(kPoolBlock, g.ow - ow);
    if (base < x || reach > end - base) {
      for (int64_t o = ow; o < ow + n; ++o) {
        int64_t w0, w1;
        PoolGeometry::clamp(o, sw, g.pl, g.kw, g.w, w0, w1);
        const int64_t at = argmax_clamped(g, plane, h0, h1, w0, w1);
        if constexpr (kArgmax)
          out[o] = at;
        else
          out[o] = at < 0 ? 0.0f : plane[at];
      }
      continue;
    }
    Floats best, v, sum{};  // sum: of the block's taps, NaN when one may be NaN (without kNan)
    Ints at{};  // each output's tap offset from its window's first tap (kArgmax)
    Ints have = Ints{} - 1;
    if (ow >= cols.lo && ow + n <= cols.hi) {
      load_strided<SW>(base, sw, best);
      for (int64_t r = 0; r < nrows; ++r)
        for (int64_t s = 0; s < g.kw; ++s) {
          load_strided<SW>(base + r * g.w + s, sw, v);
          if constexpr (!kNan) sum += v;
          Ints greater;
          max_pool_takes<kNan>(v, best, greater);
          best = greater ? v : best;
          if constexpr (kArgmax) at = greater ? Ints{} + static_cast<int32_t>(r * g.w + s) : at;
        }
    } else {
      best = Floats{};
      have = Ints{};
      for (int64_t r = 0; r < nrows; ++r)
        for (int64_t s = 0; s < g.kw; ++s) {
          load_strided<SW>(base + r * g.w + s, sw, v);
          if constexpr (!kNan) sum += v;
          Ints inside;
          std::memcpy(&inside, &inside_columns[static_cast<size_t>((ow / kPoolBlock * g.kw + s) * kPoolBlock)],
                      sizeof inside);
          Ints take;
          max_pool_takes<kNan>(v, best, take);
          take = inside & (~have | take);
          best = take ? v : best;
          if constexpr (kArgmax) at = take ? Ints{} + static_cast<int32_t>(r * g.w + s) : at;
          have |= inside;
        }
    }
    if constexpr (!kNan) nan |= sum != sum;
    if constexpr (kArgmax) {
      for (int64_t j = 0; j < n; ++j) out[ow + j] = have[j] ? (base - plane) + j * sw + at[j] : -1;
    } else {
      best = have ? best : Floats{};  // a window of padding only: 0, as the reference
      std::memcpy(out + ow, &best, static_cast<size_t>(n) * sizeof(float));
    }
  }
}

// For each block of a row (outputs ow0 = 0, 16, ...) and window column s, lane j's mask: -1 where column
// (ow0 + j) sw - pl + s lies inside the image, else 0. [block][s][lane], made once per call. (Built with
// scalar code: computed in the kernel from a vector of lane numbers, GCC emitted them element by element and
// the stem pools of GoogLeNet ran 7x slower.)
std::vector<int32_t> inside_columns(const PoolGeometry& g) {
  const int64_t blocks = (g.ow + kPoolBlock - 1) / kPoolBlock;
  std::vector<int32_t> m(static_cast<size_t>(blocks * g.kw * kPoolBlock));
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t s = 0; s < g.kw; ++s)
      for (int64_t j = 0; j < kPoolBlock; ++j) {
        const int64_t column = (b * kPoolBlock + j) * g.sw - g.pl + s;
        m[static_cast<size_t>((b * g.kw + s) * kPoolBlock + j)] = column >= 0 && column < g.w ? -1 : 0;
      }
  return m;
}

// Calls max_row with the stride as a constant for the common strides, so the
// block's loads are a fixed pattern the compiler vectorises.
template <class F>
void with_stride(int64_t sw, F&& f) {
  if (sw == 1)
    f(std::integral_constant<int64_t, 1>{});
  else if (sw == 2)
    f(std::integral_constant<int64_t, 2>{});
  else
    f(std::integral_constant<int64_t, 0>{});
}

// Every output row of one plane: row(oh, h0, h1) with its window rows clamped to [h0, h1), or, where no
// window row is inside the image, empty(oh); then row_done(oh).
template <class Row, class Empty, class RowDone>
void for_each_row(const PoolGeometry& g, Row&& row, Empty&& empty, RowDone&& row_done) {
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    int64_t h0, h1;
    PoolGeometry::clamp(oh, g.sh, g.pt, g.kh, g.h, h0, h1);
    if (h0 < h1)
      row(oh, h0, h1);
    else
      empty(oh);
    row_done(oh);
  }
}

// Plane mode, for rows much shorter than a block, where a row block would leave most lanes idle (GoogLeNet's
// inception pools, 3x3 / 1 pad 1 on 8x8, 4x4 and 2x2 planes; its 3x3 / 2 pools on 8x8 and 4x4). A block is 16
// consecutive outputs in the flat order of whole planes: a plane of more than 16 outputs is several blocks,
// its last one part-filled; planes of at most 16 outputs are packed, 16 / outputs of them per block. Each
// lane's taps come from a table of offsets and validity flags made once per call (every plane has the same
// geometry); padding is a flag, so the reference's rule holds with the first valid tap taken as it is. Where
// each tap's lanes read consecutive floats (stride 1 with OW == W: "same" pooling, the rows of a block
// continue one another) a tap is one load, else one load per lane.
struct PlaneBlocks {
  int64_t planes_per_block = 1, blocks_per_plane = 1, taps = 0;
  int64_t lane_stride = 0;  // 1 or 2: lane j of every tap reads shift + j * lane_stride; 0: one load a lane
  int64_t min_shift = 0, max_shift = 0;  // the floats the strided loads read: [min_shift, max_shift)
  std::vector<int32_t> offset, valid;    // [block][tap][lane]: a float always inside a live plane; 0 / -1
  std::vector<int32_t> shift;            // [block][tap]: lane 0's offset, its padding included

  // The table of the geometry when plane mode suits it, else none (taps = 0): rows shorter than a block, read
  // with one load a tap, or a quarter of a block at most (one load a lane: measured faster than a row block
  // only there; GoogLeNet's 8x8 -> 4x4 pool 1.3x, its 4x4 -> 2x2 one 3.7x).
  static PlaneBlocks when_suited(const PoolGeometry& g) {
    const int64_t per_plane = g.oh * g.ow;
    if (per_plane == 0 || g.ow >= kPoolBlock || (kPoolBlock + 1) * g.h * g.w > INT32_MAX ||
        (per_plane + kPoolBlock - 1) / kPoolBlock * g.kh * g.kw > 512)  // the table: tens of KB at most
      return {};
    PlaneBlocks t = of(g);
    if (t.lane_stride > 0 || 4 * g.ow <= kPoolBlock) return t;
    return {};
  }
  // The table for blocks of planes_per_block planes of which the first `live` exist (the last group of a
  // member's planes may be short: its other lanes are dead, valid 0 and offset 0).
  static PlaneBlocks of(const PoolGeometry& g, int64_t live = -1) {
    PlaneBlocks t;
    const int64_t per_plane = g.oh * g.ow;
    t.planes_per_block = std::max<int64_t>(1, kPoolBlock / per_plane);
    t.blocks_per_plane = (per_plane + kPoolBlock - 1) / kPoolBlock;
    if (live < 0) live = t.planes_per_block;
    t.taps = g.kh * g.kw;
    t.lane_stride = g.sw <= 2 ? g.sw : 0;
    const size_t n = static_cast<size_t>(t.blocks_per_plane * t.taps * kPoolBlock);
    t.offset.assign(n, 0);
    t.valid.assign(n, 0);
    t.shift.assign(static_cast<size_t>(t.blocks_per_plane * t.taps), 0);
    for (int64_t b = 0; b < t.blocks_per_plane; ++b)
      for (int64_t tap = 0; tap < t.taps; ++tap) {
        const int64_t r = tap / g.kw, s = tap % g.kw, row = (b * t.taps + tap) * kPoolBlock;
        int32_t& shift = t.shift[static_cast<size_t>(b * t.taps + tap)];
        for (int64_t j = 0; j < kPoolBlock; ++j) {
          const int64_t q = b * kPoolBlock + j, k = q / per_plane, o = q % per_plane;
          const int64_t ih = o / g.ow * g.sh - g.pt + r, iw = o % g.ow * g.sw - g.pl + s;
          const int64_t at = k * g.h * g.w + ih * g.w + iw;
          if (j == 0) shift = static_cast<int32_t>(at);
          if (k >= live || (t.planes_per_block == 1 && q >= per_plane)) continue;  // a dead lane
          const bool inside = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
          t.valid[static_cast<size_t>(row + j)] = inside ? -1 : 0;
          t.offset[static_cast<size_t>(row + j)] = static_cast<int32_t>(inside ? at : k * g.h * g.w);
          if (inside && at != shift + j * t.lane_stride) t.lane_stride = 0;
        }
      }
    const auto [lo, hi] = std::minmax_element(t.shift.begin(), t.shift.end());
    t.min_shift = *lo;
    t.max_shift = *hi + (kPoolBlock - 1) * std::max<int64_t>(1, t.lane_stride) + 1;
    return t;
  }
};

// Block b of the planes at `base`: each lane's maximum, the offset from `base` of its first maximum, and
// whether its window holds any input. SW > 0: each tap one load_strided<SW> from base + shift.
template <int64_t SW, bool kNan>
void max_plane_block(const PlaneBlocks& t, int64_t b, const float* base, Floats& best, Ints& at, Ints& have,
                     Ints& nan) {
  Floats sum{};  // of the block's taps, NaN when one may be NaN (without kNan)
  best = Floats{};
  at = Ints{};
  have = Ints{};
  for (int64_t tap = 0; tap < t.taps; ++tap) {
    const size_t row = static_cast<size_t>((b * t.taps + tap) * kPoolBlock);
    Ints valid, offset;
    std::memcpy(&valid, &t.valid[row], sizeof valid);
    std::memcpy(&offset, &t.offset[row], sizeof offset);
    Floats v;
    if constexpr (SW > 0)
      load_strided<SW>(base + t.shift[static_cast<size_t>(b * t.taps + tap)], SW, v);
    else
      for (int64_t j = 0; j < kPoolBlock; ++j) v[j] = base[offset[j]];
    if constexpr (!kNan) sum += v;
    Ints take;
    max_pool_takes<kNan>(v, best, take);
    take = valid & (~have | take);
    best = take ? v : best;
    at = take ? offset : at;
    have |= valid;
  }
  if constexpr (!kNan) nan |= sum != sum;
}

// Block b of the planes at `base` (max_plane_block): strided loads when `strided` and the table allows them.
template <bool kNan>
void max_plane_block_of(const PlaneBlocks& t, int64_t b, const float* base, bool strided, Floats& best, Ints& at,
                        Ints& have, Ints& nan) {
  if (strided && t.lane_stride == 1)
    max_plane_block<1, kNan>(t, b, base, best, at, have, nan);
  else if (strided && t.lane_stride == 2)
    max_plane_block<2, kNan>(t, b, base, best, at, have, nan);
  else
    max_plane_block<0, kNan>(t, b, base, best, at, have, nan);
}

// Every block of the planes [first, last) of X: block(first plane, live planes, b, the block's lane results).
// A block loads strided where its table allows and the loads stay inside X [x, x_end). A group of planes runs
// without the NaN test, and again, every block, with it when a tap may be NaN (`block` then sees each b twice).
template <class Block>
void for_each_plane_block(const PoolGeometry& g, const PlaneBlocks& table, int64_t first, int64_t last, const float* x,
                          const float* x_end, Block&& block) {
  PlaneBlocks tail;
  const int64_t hw = g.h * g.w;
  for (int64_t p = first; p < last; p += table.planes_per_block) {
    const int64_t live = std::min(table.planes_per_block, last - p);
    if (live < table.planes_per_block && tail.taps == 0) tail = PlaneBlocks::of(g, live);  // the last group only
    const PlaneBlocks& t = live < table.planes_per_block ? tail : table;
    const float* base = x + p * hw;
    const bool strided = t.min_shift >= x - base && t.max_shift <= x_end - base;
    Ints nan{};
    for (int64_t b = 0; b < t.blocks_per_plane; ++b) {
      Floats best;
      Ints at, have;
      max_plane_block_of<false>(t, b, base, strided, best, at, have, nan);
      block(p, live, b, best, at, have);
    }
    if (!max_pool_any_lane(nan)) continue;
    for (int64_t b = 0; b < t.blocks_per_plane; ++b) {
      Floats best;
      Ints at, have;
      max_plane_block_of<true>(t, b, base, strided, best, at, have, nan);
      block(p, live, b, best, at, have);
    }
  }
}

}  // namespace

CORUN_SIMD_CLONES void max_pool_fast(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return max_pool_blocked(call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const InteriorColumns cols = InteriorColumns::of(g);
  const Range planes = split_range(g.planes, rank, width);
  const float* end = buf[0] + g.planes * g.h * g.w;
  if (const PlaneBlocks table = PlaneBlocks::when_suited(g); table.taps > 0) {
    const int64_t per_plane = g.oh * g.ow;
    for_each_plane_block(g, table, planes.begin, planes.end, buf[0], end,
                         [&](int64_t p, int64_t live, int64_t b, Floats best, Ints, Ints have) {
                           best = have ? best : Floats{};  // an all-padding window: 0, as the reference
                           const int64_t n = std::min(kPoolBlock, live * per_plane - b * kPoolBlock);
                           std::memcpy(buf[1] + p * per_plane + b * kPoolBlock, &best,
                                       static_cast<size_t>(n) * sizeof(float));
                         });
    return;
  }
  const std::vector<int32_t> masks = inside_columns(g);
  with_stride(g.sw, [&](auto sw) {
    for (int64_t p = planes.begin; p < planes.end; ++p) {
      const float* plane = buf[0] + p * g.h * g.w;
      float* out = buf[1] + p * g.oh * g.ow;
      auto rows = [&](auto nan_test) {  // the plane's outputs; false when a tap may be NaN (without the test)
        Ints nan{};
        for_each_row(
            g,
            [&](int64_t oh, int64_t h0, int64_t h1) {
              max_row<decltype(sw)::value, decltype(nan_test)::value>(g, cols, masks, plane, h0, h1, buf[0], end,
                                                                      out + oh * g.ow, nan);
            },
            [&](int64_t oh) { std::fill_n(out + oh * g.ow, g.ow, 0.0f); }, [](int64_t) {});
        return !max_pool_any_lane(nan);
      };
      if (!rows(std::false_type{})) rows(std::true_type{});
    }
  });
}

CORUN_SIMD_CLONES void max_pool_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  if (pool_block(call) != 0) return max_pool_grad_blocked(call, buf, rank, width);
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const InteriorColumns cols = InteriorColumns::of(g);
  const Range planes = split_range(g.planes, rank, width);
  const float* end = buf[0] + g.planes * g.h * g.w;
  if (const PlaneBlocks table = PlaneBlocks::when_suited(g); table.taps > 0) {
    const int64_t per_plane = g.oh * g.ow, hw = g.h * g.w;
    for_each_plane_block(g, table, planes.begin, planes.end, buf[0], end,
                         [&](int64_t p, int64_t live, int64_t b, Floats, Ints at, Ints have) {
                           float* dx = buf[2] + p * hw;  // the block's planes, in output order
                           if (b == 0) std::fill_n(dx, live * hw, 0.0f);
                           const float* dy = buf[1] + p * per_plane + b * kPoolBlock;
                           const int64_t n = std::min(kPoolBlock, live * per_plane - b * kPoolBlock);
                           for (int64_t j = 0; j < n; ++j)
                             if (have[j]) dx[at[j]] += dy[j];
                         });
    return;
  }
  std::vector<int64_t> arg(static_cast<size_t>(g.ow));
  const std::vector<int32_t> masks = inside_columns(g);
  with_stride(g.sw, [&](auto sw) {
    for (int64_t p = planes.begin; p < planes.end; ++p) {
      const float* plane = buf[0] + p * g.h * g.w;
      const float* dy = buf[1] + p * g.oh * g.ow;
      float* dx = buf[2] + p * g.h * g.w;
      // Each row's argmaxes first (vectorised), then its gradients scattered in output order: the order of
      // the sums into dX that overlapping windows share, the same at every width. False when a tap may be
      // NaN (without the test): the plane is then done again with it.
      auto rows = [&](auto nan_test) {
        std::fill_n(dx, g.h * g.w, 0.0f);
        Ints nan{};
        for_each_row(
            g,
            [&](int64_t, int64_t h0, int64_t h1) {
              max_row<decltype(sw)::value, decltype(nan_test)::value>(g, cols, masks, plane, h0, h1, buf[0], end,
                                                                      arg.data(), nan);
            },
            [&](int64_t) { std::fill(arg.begin(), arg.end(), -1); },
            [&](int64_t oh) {
              for (int64_t ow = 0; ow < g.ow; ++ow)
                if (arg[ow] >= 0) dx[arg[ow]] += dy[oh * g.ow + ow];
            });
        return !max_pool_any_lane(nan);
      };
      if (!rows(std::false_type{})) rows(std::true_type{});
    }
  });
}

}  // namespace corun::codelets
