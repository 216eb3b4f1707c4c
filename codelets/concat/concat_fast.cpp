// Fast concat: this member's 16-aligned block of Y is cut where rows or input pieces change, and each
// piece is one memcpy. Splitting Y's flattened elements (not rows) keeps every member busy even when
// concatenating along dim 0 (one outer row).
#include "codelets/concat/concat.hpp"

#include <algorithm>
#include <cstring>

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line of Y.
constexpr int64_t kAlign = 16;

}  // namespace

void concat_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const int nx = call.nbuffers() - 1;
  const Shape& sy = call.shapes[static_cast<size_t>(nx)];
  const int64_t inner = sy.inner(dim);
  const int64_t row_y = sy[dim] * inner;
  const Range r = split_range(sy.numel(), rank, width, kAlign);
  float* y = buf[nx];
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t row = e / row_y;
    const int64_t col = e % row_y;
    int x = 0;
    int64_t offset = 0;  // where input x starts within Y's row
    int64_t row_x = call.shapes[0][dim] * inner;
    while (col >= offset + row_x) {
      offset += row_x;
      row_x = call.shapes[static_cast<size_t>(++x)][dim] * inner;
    }
    const int64_t len = std::min(offset + row_x - col, r.end - e);
    std::memcpy(y + e, buf[x] + row * row_x + (col - offset), static_cast<size_t>(len) * sizeof(float));
    e += len;
  }
}

}  // namespace corun::codelets
