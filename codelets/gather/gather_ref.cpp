// Reference gather and gather_grad: one element at a time.
#include "codelets/gather/gather.hpp"

#include "base/check.hpp"

#include <cmath>

namespace corun::codelets {

int64_t gather_index(const float* idx, int64_t n, int64_t extent, const char* op) {
  const float v = idx[n];
  const float lo = -static_cast<float>(extent), hi = static_cast<float>(extent);
  // Compared as floats first so NaN, infinities and huge values never reach the integer conversion.
  CORUN_CHECK(v >= lo && v < hi && std::floor(v) == v, Status::invalid_argument,
              op << ": index " << v << " at position " << n << " is not an integer in [" << -extent << ", " << extent
                 << ") along the gathered dim of extent " << extent << "; pass positions 0.." << extent - 1
                 << " (or negative ones from the end) as exact integers");
  const int64_t k = static_cast<int64_t>(v);
  return k < 0 ? k + extent : k;
}

void gather_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sx = call.shapes[0];
  const int axis = static_cast<int>(call.i[0]);
  const int64_t extent = sx[axis], inner = sx.inner(axis), count = call.shapes[1].numel();
  const Range r = split_range(call.shapes[2].numel(), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const int64_t j = e % inner, n = (e / inner) % count, o = e / (inner * count);
    buf[2][e] = buf[0][(o * extent + gather_index(buf[1], n, extent, "gather")) * inner + j];
  }
}

void gather_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sx = call.shapes[2];
  const int axis = static_cast<int>(call.i[0]);
  const int64_t extent = sx[axis], inner = sx.inner(axis), count = call.shapes[0].numel();
  const Range r = split_range(sx.numel(), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const int64_t j = e % inner, k = (e / inner) % extent, o = e / (inner * extent);
    float acc = 0.0f;  // f32 in index order: the order is the specification, not the precision
    for (int64_t n = 0; n < count; ++n)
      if (gather_index(buf[0], n, extent, "gather_grad") == k) acc += buf[1][(o * count + n) * inner + j];
    buf[2][e] = acc;
  }
}

}  // namespace corun::codelets
