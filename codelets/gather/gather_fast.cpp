// Fast gather (one memcpy per output row of `inner` floats) and gather_grad (a member zeroes its rows of dX,
// then adds, outer index by outer index, the dY rows whose index falls in them, scanning idx in order).
#include "codelets/gather/gather.hpp"

#include <algorithm>
#include <cstring>

namespace corun::codelets {

void gather_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sx = call.shapes[0];
  const int axis = static_cast<int>(call.i[0]);
  const int64_t extent = sx[axis], inner = sx.inner(axis), count = call.shapes[1].numel();
  const Range rows = split_range(call.shapes[2].numel() / inner, rank, width);
  for (int64_t row = rows.begin; row < rows.end; ++row) {
    const int64_t n = row % count, o = row / count;
    const int64_t k = gather_index(buf[1], n, extent, "gather");
    std::memcpy(buf[2] + row * inner, buf[0] + (o * extent + k) * inner, static_cast<size_t>(inner) * sizeof(float));
  }
}

void gather_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sx = call.shapes[2];
  const int axis = static_cast<int>(call.i[0]);
  const int64_t extent = sx[axis], inner = sx.inner(axis), count = call.shapes[0].numel();
  const Range rows = split_range(sx.numel() / inner, rank, width);  // rows (o, k) of dX
  if (rows.size() <= 0) return;
  float* dx = buf[2];
  std::memset(dx + rows.begin * inner, 0, static_cast<size_t>(rows.size() * inner) * sizeof(float));
  for (int64_t o = rows.begin / extent; o <= (rows.end - 1) / extent; ++o) {
    const int64_t k0 = std::max(rows.begin - o * extent, int64_t{0});
    const int64_t k1 = std::min(rows.end - o * extent, extent);
    for (int64_t n = 0; n < count; ++n) {
      const int64_t k = gather_index(buf[0], n, extent, "gather_grad");
      if (k < k0 || k >= k1) continue;  // another member's row
      float* __restrict dst = dx + (o * extent + k) * inner;
      const float* __restrict src = buf[1] + (o * count + n) * inner;
      for (int64_t j = 0; j < inner; ++j) dst[j] += src[j];
    }
  }
}

}  // namespace corun::codelets
