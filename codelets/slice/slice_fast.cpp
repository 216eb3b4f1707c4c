// Fast slice and slice_grad: the member's 16-aligned block of the output is cut at row and window
// boundaries; each piece is one memcpy (or one zero fill for slice_grad outside the window). Splitting
// flattened output elements, not rows, keeps every member busy when outer is 1.
#include "codelets/slice/slice.hpp"

#include <algorithm>
#include <cstring>

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line of the output.
constexpr int64_t kAlign = 16;

}  // namespace

void slice_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[0];
  const int64_t inner = sx.inner(dim);
  const int64_t row_x = sx[dim] * inner;
  const int64_t row_y = call.i[2] * inner;
  const int64_t first = call.i[1] * inner;
  const Range r = split_range(numel(call, 1), rank, width, kAlign);
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t row = e / row_y;
    const int64_t col = e % row_y;
    const int64_t len = std::min(row_y - col, r.end - e);
    std::memcpy(buf[1] + e, buf[0] + row * row_x + first + col, static_cast<size_t>(len) * sizeof(float));
    e += len;
  }
}

void slice_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[1];
  const int64_t inner = sx.inner(dim);
  const int64_t row_x = sx[dim] * inner;
  const int64_t row_y = call.i[2] * inner;
  const int64_t first = call.i[1] * inner;
  const int64_t last = first + row_y;
  const Range r = split_range(numel(call, 1), rank, width, kAlign);
  float* dx = buf[1];
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t row = e / row_x;
    const int64_t col = e % row_x;
    // Which of the three column spans of the row (zeros, window, zeros) col falls in.
    const int64_t span_end = col < first ? first : (col < last ? last : row_x);
    const int64_t len = std::min(span_end - col, r.end - e);
    if (col >= first && col < last) {
      std::memcpy(dx + e, buf[0] + row * row_y + (col - first), static_cast<size_t>(len) * sizeof(float));
    } else {
      std::fill(dx + e, dx + e + len, 0.0f);
    }
    e += len;
  }
}

}  // namespace corun::codelets
