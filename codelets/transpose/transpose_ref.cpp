// Reference transpose: one element at a time, each output index decoded into the input offset.
#include "codelets/transpose/transpose.hpp"

namespace corun::codelets {

void transpose_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sx = call.shapes[0];
  const Shape& sy = call.shapes[1];
  std::array<int64_t, 6> x_stride{};
  int64_t s = 1;
  for (int d = sx.rank - 1; d >= 0; --d) {
    x_stride[static_cast<size_t>(d)] = s;
    s *= sx[d];
  }
  const Range r = split_range(sy.numel(), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    int64_t rest = e, src = 0;
    for (int d = sy.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % sy[d];
      rest /= sy[d];
      src += idx * x_stride[static_cast<size_t>(call.i[static_cast<size_t>(d)])];
    }
    buf[1][e] = buf[0][src];
  }
}

}  // namespace corun::codelets
