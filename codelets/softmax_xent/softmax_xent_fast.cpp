// Fast softmax cross-entropy in float. The forward op owns whole rows (a row's max and sum are
// reductions and must not be split); the gradient is elementwise over 16-aligned element blocks.
#include "codelets/softmax_xent/softmax_xent.hpp"

#include <algorithm>
#include <cmath>

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC -O2
// (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide inner
// loops followed by scalar tails. The row's max, sum and dot stay serial: reordering them would need
// -ffast-math.
constexpr int kBlock = 16;

void scale_row(float* __restrict p, float s, int64_t n) {
  int64_t c = 0;
  for (; c + kBlock <= n; c += kBlock)
    for (int j = 0; j < kBlock; ++j) p[c + j] *= s;
  for (; c < n; ++c) p[c] *= s;
}

// dz = (p - t) * dl over n elements.
void grad_span(const float* __restrict p, const float* __restrict t, float dl, float* __restrict dz,
               int64_t n) {
  int64_t c = 0;
  for (; c + kBlock <= n; c += kBlock)
    for (int j = 0; j < kBlock; ++j) dz[c + j] = (p[c + j] - t[c + j]) * dl;
  for (; c < n; ++c) dz[c] = (p[c] - t[c]) * dl;
}

void softmax_xent_row(const float* __restrict z, const float* __restrict t, float* __restrict p,
                      float* __restrict loss, int64_t classes) {
  float max = z[0];
  for (int64_t c = 1; c < classes; ++c) max = z[c] > max ? z[c] : max;
  float sum = 0.0f;
  for (int64_t c = 0; c < classes; ++c) {
    p[c] = std::exp(z[c] - max);
    sum += p[c];
  }
  const float log_sum = std::log(sum);
  const float inv_sum = 1.0f / sum;
  scale_row(p, inv_sum, classes);
  float dot = 0.0f;
  for (int64_t c = 0; c < classes; ++c) dot += t[c] * (z[c] - max - log_sum);
  *loss = -dot;
}

}  // namespace

void softmax_xent_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t classes = call.shapes[0][1];
  const Range rows = split_range(call.shapes[0][0], rank, width);
  for (int64_t b = rows.begin; b < rows.end; ++b)
    softmax_xent_row(buf[0] + b * classes, buf[1] + b * classes, buf[2] + b * classes, buf[3] + b, classes);
}

void softmax_xent_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t classes = call.shapes[0][1];
  const Range r = split_range(numel(call, 3), rank, width, kBlock);
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t len = std::min(classes - e % classes, r.end - e);
    grad_span(buf[0] + e, buf[1] + e, buf[2][e / classes], buf[3] + e, len);
    e += len;
  }
}

}  // namespace corun::codelets
