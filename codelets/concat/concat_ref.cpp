// Reference concat: each element of Y finds its input piece by a linear scan over the inputs.
#include "codelets/concat/concat.hpp"

namespace corun::codelets {

void concat_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const int nx = call.nbuffers() - 1;
  const Shape& sy = call.shapes[static_cast<size_t>(nx)];
  const int64_t inner = sy.inner(dim);
  const int64_t row_y = sy[dim] * inner;
  // Elements per outer row of buffer b's piece.
  auto piece = [&](int b) { return call.shapes[static_cast<size_t>(b)][dim] * inner; };
  const Range r = split_range(sy.numel(), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const int64_t row = e / row_y;
    int64_t col = e % row_y;
    int x = 0;
    while (col >= piece(x)) col -= piece(x++);
    const int64_t row_x = piece(x);
    buf[nx][e] = buf[x][row * row_x + col];
  }
}

}  // namespace corun::codelets
