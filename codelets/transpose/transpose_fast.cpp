// Fast transpose. Adjacent dimensions that stay adjacent are merged first ([B,H,S,D] perm 0,2,1,3 is a
// 3-D [B, S, H] transpose of D-float runs). Then either
//  - Y's innermost dim is X's innermost (the permutation keeps a contiguous run): one memcpy per output
//    row, rows split over the team; or
//  - X's innermost dim moves elsewhere: a blocked 2-D transpose between Y's dim q (the one that is X's
//    innermost) and Y's innermost dim, in tiles of kTile x kTile, so reads and writes both touch whole
//    cache lines. Work items are (the other output dims, a tile of q's rows); every item writes its own
//    output rows, so members never share a written element.
#include "codelets/transpose/transpose.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cstring>

namespace corun::codelets {
namespace {

constexpr int64_t kTile = 16;

}  // namespace

TransposePlan transpose_plan(const Shape& x, const std::array<int64_t, kMaxIntAttrs>& perm) {
  std::array<int64_t, 6> x_stride{};
  int64_t s = 1;
  for (int d = x.rank - 1; d >= 0; --d) {
    x_stride[static_cast<size_t>(d)] = s;
    s *= x[d];
  }
  TransposePlan p;
  for (int d = 0; d < x.rank; ++d) {
    const int src = static_cast<int>(perm[static_cast<size_t>(d)]);
    const int64_t extent = x[src], stride = x_stride[static_cast<size_t>(src)];
    if (extent == 1) continue;  // a unit dim moves nothing
    // Merge with the previous output dim when it is the input dim just outside this one.
    if (p.rank > 0 && p.in_stride[static_cast<size_t>(p.rank - 1)] == stride * extent) {
      p.out[static_cast<size_t>(p.rank - 1)] *= extent;
      p.in_stride[static_cast<size_t>(p.rank - 1)] = stride;
      continue;
    }
    p.out[static_cast<size_t>(p.rank)] = extent;
    p.in_stride[static_cast<size_t>(p.rank)] = stride;
    ++p.rank;
  }
  if (p.rank == 0) {  // every extent 1: a single element
    p.rank = 1;
    p.out[0] = 1;
    p.in_stride[0] = 1;
  }
  return p;
}

void transpose_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const TransposePlan p = transpose_plan(call.shapes[0], call.i);
  const float* x = buf[0];
  float* y = buf[1];
  const int last = p.rank - 1;
  const int64_t row_len = p.out[static_cast<size_t>(last)];
  std::array<int64_t, 6> out_stride{};
  int64_t s = 1;
  for (int d = last; d >= 0; --d) {
    out_stride[static_cast<size_t>(d)] = s;
    s *= p.out[static_cast<size_t>(d)];
  }
  const int64_t total = s;

  if (p.in_stride[static_cast<size_t>(last)] == 1) {  // contiguous runs: copy whole rows
    const Range rows = split_range(total / row_len, rank, width);
    for (int64_t r = rows.begin; r < rows.end; ++r) {
      int64_t rest = r, src = 0;
      for (int d = last - 1; d >= 0; --d) {
        src += (rest % p.out[static_cast<size_t>(d)]) * p.in_stride[static_cast<size_t>(d)];
        rest /= p.out[static_cast<size_t>(d)];
      }
      std::memcpy(y + r * row_len, x + src, static_cast<size_t>(row_len) * sizeof(float));
    }
    return;
  }

  int q = -1;  // the output dim that is X's innermost (stride 1): it exists since it is not the last
  for (int d = 0; d < last; ++d)
    if (p.in_stride[static_cast<size_t>(d)] == 1) q = d;
  CORUN_ASSERT(q >= 0);
  const int64_t q_len = p.out[static_cast<size_t>(q)], q_tiles = (q_len + kTile - 1) / kTile;
  const int64_t b_stride = p.in_stride[static_cast<size_t>(last)];  // X stride along Y's innermost dim
  const int64_t q_out_stride = out_stride[static_cast<size_t>(q)];
  const int64_t others = total / (q_len * row_len);
  const Range items = split_range(others * q_tiles, rank, width);
  for (int64_t it = items.begin; it < items.end; ++it) {
    const int64_t tile = it % q_tiles;
    int64_t rest = it / q_tiles, src = 0, dst = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (d == q) continue;
      const int64_t idx = rest % p.out[static_cast<size_t>(d)];
      rest /= p.out[static_cast<size_t>(d)];
      src += idx * p.in_stride[static_cast<size_t>(d)];
      dst += idx * out_stride[static_cast<size_t>(d)];
    }
    const int64_t a0 = tile * kTile, a1 = std::min(q_len, a0 + kTile);
    for (int64_t b0 = 0; b0 < row_len; b0 += kTile) {
      const int64_t b1 = std::min(row_len, b0 + kTile);
      for (int64_t a = a0; a < a1; ++a) {
        float* __restrict out = y + dst + a * q_out_stride;
        const float* __restrict in = x + src + a;
        for (int64_t b = b0; b < b1; ++b) out[b] = in[b * b_stride];
      }
    }
  }
}

}  // namespace corun::codelets
