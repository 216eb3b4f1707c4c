// Reference slice and slice_grad, one element at a time. With inner = product of the extents after dim,
// X is [outer, extent * inner] and the slice is the column window [start * inner, (start + len) * inner).
#include "codelets/slice/slice.hpp"

namespace corun::codelets {

void slice_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[0];
  const int64_t inner = sx.inner(dim);
  const int64_t row_x = sx[dim] * inner;
  const int64_t row_y = call.i[2] * inner;
  const int64_t first = call.i[1] * inner;
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[1][e] = buf[0][(e / row_y) * row_x + first + e % row_y];
}

void slice_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[1];
  const int64_t inner = sx.inner(dim);
  const int64_t row_x = sx[dim] * inner;
  const int64_t row_y = call.i[2] * inner;
  const int64_t first = call.i[1] * inner;
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const int64_t col = e % row_x - first;
    buf[1][e] = (col >= 0 && col < row_y) ? buf[0][(e / row_x) * row_y + col] : 0.0f;
  }
}

}  // namespace corun::codelets
