// Fast sum and sum_grad over 16-aligned blocks of the output's flattened elements.
//
// sum keeps the index-order summation of every Y element (so results do not depend on how Y is split)
// and gets its vector width from neighbouring Y elements instead: for inner > 1 it adds whole rows
// X[o, k, j0:j1] into Y[o, j0:j1] for k = 0, 1, ...
#include "codelets/sum/sum.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC -O2
// (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide inner
// loops followed by scalar tails.
constexpr int kBlock = 16;

// y[t] = f * sum_k x[k * stride + t] for t < len, k in order.
void sum_columns(const float* __restrict x, float* __restrict y, int64_t len, int64_t extent, int64_t stride,
                 float f) {
  const int64_t whole = len / kBlock * kBlock;
  for (int64_t t = 0; t < len; ++t) y[t] = x[t];
  for (int64_t k = 1; k < extent; ++k) {
    const float* xk = x + k * stride;
    for (int64_t t = 0; t < whole; t += kBlock)
      for (int j = 0; j < kBlock; ++j) y[t + j] += xk[t + j];
    for (int64_t t = whole; t < len; ++t) y[t] += xk[t];
  }
  for (int64_t t = 0; t < len; ++t) y[t] *= f;
}

// dx[t] = f * dy[t] for t < len.
void scale_span(const float* __restrict dy, float* __restrict dx, int64_t len, float f) {
  const int64_t whole = len / kBlock * kBlock;
  for (int64_t t = 0; t < whole; t += kBlock)
    for (int j = 0; j < kBlock; ++j) dx[t + j] = f * dy[t + j];
  for (int64_t t = whole; t < len; ++t) dx[t] = f * dy[t];
}

}  // namespace

void sum_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[0];
  const int64_t extent = sx[dim];
  const int64_t inner = sx.inner(dim);
  const Range r = split_range(numel(call, 1), rank, width, kBlock);
  const float* x = buf[0];
  float* y = buf[1];
  if (inner == 1) {  // contiguous rows: a plain serial reduction per Y element
    for (int64_t o = r.begin; o < r.end; ++o) {
      const float* xo = x + o * extent;
      float acc = xo[0];
      for (int64_t k = 1; k < extent; ++k) acc += xo[k];
      y[o] = call.f * acc;
    }
    return;
  }
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t outer = e / inner;
    const int64_t j = e % inner;
    const int64_t len = std::min(inner - j, r.end - e);
    sum_columns(x + outer * extent * inner + j, y + e, len, extent, inner, call.f);
    e += len;
  }
}

void sum_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int dim = static_cast<int>(call.i[0]);
  const Shape& sx = call.shapes[1];
  const int64_t extent = sx[dim];
  const int64_t inner = sx.inner(dim);
  const float f = call.f;
  const Range r = split_range(numel(call, 1), rank, width, kBlock);
  const float* dy = buf[0];
  float* dx = buf[1];
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t outer = e / (extent * inner);
    const int64_t j = e % inner;
    if (inner == 1) {  // the rest of this outer row is one constant
      const int64_t k = e % extent;
      const int64_t len = std::min(extent - k, r.end - e);
      std::fill(dx + e, dx + e + len, f * dy[outer]);
      e += len;
    } else {
      const int64_t len = std::min(inner - j, r.end - e);
      scale_span(dy + outer * inner + j, dx + e, len, f);
      e += len;
    }
  }
}

}  // namespace corun::codelets
