// Fast sigmoid in float over 16-aligned element blocks. exp(-|x|) lies in (0, 1], so neither branch can
// produce inf or NaN however large |x| is; the select keeps the loop body branch-free.
#include "codelets/sigmoid/sigmoid.hpp"

#include <cmath>

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment.
constexpr int64_t kAlign = 16;

}  // namespace

void sigmoid_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width, kAlign);
  const float* __restrict x = buf[0] + r.begin;
  float* __restrict y = buf[1] + r.begin;
  for (int64_t e = 0; e < r.size(); ++e) {
    const float z = std::exp(-std::fabs(x[e]));
    const float inv = 1.0f / (1.0f + z);
    y[e] = x[e] >= 0.0f ? inv : z * inv;
  }
}

void sigmoid_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width, kAlign);
  const float* __restrict y = buf[0] + r.begin;
  const float* __restrict dy = buf[1] + r.begin;
  float* __restrict dx = buf[2] + r.begin;
  for (int64_t e = 0; e < r.size(); ++e) dx[e] = dy[e] * y[e] * (1.0f - y[e]);
}

}  // namespace corun::codelets
