// Reference split: each element of X finds the output piece it belongs to by a linear scan. Members
// split X's elements; since every element of X lands in exactly one output, that covers every output
// element exactly once.
#include "codelets/split/split.hpp"

namespace corun::codelets {

void split_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[0];
  const int64_t inner = sx.inner(dim);
  const int64_t row_x = sx[dim] * inner;
  // Elements per outer row of buffer b's piece.
  auto piece = [&](int b) { return call.shapes[static_cast<size_t>(b)][dim] * inner; };
  const Range r = split_range(sx.numel(), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const int64_t row = e / row_x;
    int64_t col = e % row_x;
    int y = 1;
    while (col >= piece(y)) col -= piece(y++);
    const int64_t row_y = piece(y);
    buf[y][row * row_y + col] = buf[0][e];
  }
}

}  // namespace corun::codelets
