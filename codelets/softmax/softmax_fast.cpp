// Fast softmax family. A member's lanes are walked as runs of up to kChunk neighbouring lanes of one
// outer index (lanes that are neighbours in memory when inner > 1), each reduction kept per lane in a
// stack array, so the loops over the run vectorise and every read is a contiguous stretch. A lane's
// arithmetic (f32, k = 0 .. n-1 in order) does not depend on the run it falls in, so the bits do not
// depend on the width.
#include "codelets/softmax/softmax.hpp"

#include <algorithm>
#include <cmath>

namespace corun::codelets {
namespace {

constexpr int64_t kChunk = 64;

// Calls body(base, count, n, inner) for runs of `count` <= kChunk lanes starting at element `base`.
template <class Body>
void each_run(const OpCall& call, int rank, int width, Body body) {
  const Shape& s = call.shapes[0];
  const int dim = static_cast<int>(call.i[0]);
  const int64_t n = s[dim], inner = s.inner(dim);
  const Range r = split_range(s.outer(dim) * inner, rank, width);
  for (int64_t lane = r.begin; lane < r.end;) {
    const int64_t j = lane % inner;
    const int64_t count = std::min({kChunk, inner - j, r.end - lane});
    body((lane / inner) * n * inner + j, count, n, inner);
    lane += count;
  }
}

// m[c] = max over k of x[k * inner + c]; s[c] = sum of exp(x - m).
void max_and_sum(const float* x, int64_t count, int64_t n, int64_t inner, float* m, float* s) {
  for (int64_t c = 0; c < count; ++c) {
    m[c] = -INFINITY;
    s[c] = 0.0f;
  }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t c = 0; c < count; ++c) m[c] = std::fmax(m[c], x[k * inner + c]);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t c = 0; c < count; ++c) s[c] += std::exp(x[k * inner + c] - m[c]);
}

}  // namespace

void softmax_fast(const OpCall& call, float* const* buf, int rank, int width) {
  each_run(call, rank, width, [&](int64_t base, int64_t count, int64_t n, int64_t inner) {
    float m[kChunk], s[kChunk];
    const float* x = buf[0] + base;
    float* y = buf[1] + base;
    max_and_sum(x, count, n, inner, m, s);
    for (int64_t c = 0; c < count; ++c) s[c] = 1.0f / s[c];
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < count; ++c) y[k * inner + c] = std::exp(x[k * inner + c] - m[c]) * s[c];
  });
}

void log_softmax_fast(const OpCall& call, float* const* buf, int rank, int width) {
  each_run(call, rank, width, [&](int64_t base, int64_t count, int64_t n, int64_t inner) {
    float m[kChunk], s[kChunk];
    const float* x = buf[0] + base;
    float* y = buf[1] + base;
    max_and_sum(x, count, n, inner, m, s);
    for (int64_t c = 0; c < count; ++c) m[c] += std::log(s[c]);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < count; ++c) y[k * inner + c] = x[k * inner + c] - m[c];
  });
}

void softmax_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  each_run(call, rank, width, [&](int64_t base, int64_t count, int64_t n, int64_t inner) {
    float dot[kChunk] = {};
    const float* y = buf[0] + base;
    const float* dy = buf[1] + base;
    float* dx = buf[2] + base;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < count; ++c) dot[c] += y[k * inner + c] * dy[k * inner + c];
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < count; ++c) dx[k * inner + c] = y[k * inner + c] * (dy[k * inner + c] - dot[c]);
  });
}

void log_softmax_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  each_run(call, rank, width, [&](int64_t base, int64_t count, int64_t n, int64_t inner) {
    float sum[kChunk] = {};
    const float* y = buf[0] + base;
    const float* dy = buf[1] + base;
    float* dx = buf[2] + base;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < count; ++c) sum[c] += dy[k * inner + c];
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < count; ++c) dx[k * inner + c] = dy[k * inner + c] - std::exp(y[k * inner + c]) * sum[c];
  });
}

}  // namespace corun::codelets
