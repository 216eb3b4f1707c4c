// Fast split: this member's 16-aligned block of X's flattened elements is cut where rows or output
// pieces change, and each piece is one memcpy (each X element goes to exactly one output element).
#include "codelets/split/split.hpp"

#include <algorithm>
#include <cstring>

namespace corun::codelets {
namespace {

// Aligned blocks of X keep the copies in whole cache lines of the source where the layout allows.
constexpr int64_t kAlign = 16;

}  // namespace

void split_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[0];
  const int64_t inner = sx.inner(dim);
  const int64_t row_x = sx[dim] * inner;
  const Range r = split_range(sx.numel(), rank, width, kAlign);
  const float* x = buf[0];
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t row = e / row_x;
    const int64_t col = e % row_x;
    int y = 1;
    int64_t offset = 0;  // where output y starts within X's row
    int64_t row_y = call.shapes[1][dim] * inner;
    while (col >= offset + row_y) {
      offset += row_y;
      row_y = call.shapes[static_cast<size_t>(++y)][dim] * inner;
    }
    const int64_t len = std::min(offset + row_y - col, r.end - e);
    std::memcpy(buf[y] + row * row_y + (col - offset), x + e, static_cast<size_t>(len) * sizeof(float));
    e += len;
  }
}

}  // namespace corun::codelets
