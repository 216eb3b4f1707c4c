// Reference sum (double accumulation, index order) and sum_grad, one output element at a time.
#include "codelets/sum/sum.hpp"

namespace corun::codelets {

void sum_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[0];
  const int64_t extent = sx[dim];
  const int64_t inner = sx.inner(dim);
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const float* x = buf[0] + (e / inner) * extent * inner + e % inner;
    double acc = 0.0;
    for (int64_t k = 0; k < extent; ++k) acc += static_cast<double>(x[k * inner]);
    buf[1][e] = static_cast<float>(static_cast<double>(call.f) * acc);
  }
}

void sum_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[1];
  const int64_t extent = sx[dim];
  const int64_t inner = sx.inner(dim);
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const int64_t outer = e / (extent * inner);
    buf[1][e] = call.f * buf[0][outer * inner + e % inner];
  }
}

}  // namespace corun::codelets
