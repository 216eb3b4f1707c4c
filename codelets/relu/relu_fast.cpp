// Fast relu over 16-aligned element blocks; the selects vectorise to compare + blend.
#include "codelets/relu/relu.hpp"

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment.
constexpr int64_t kAlign = 16;

}  // namespace

void relu_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width, kAlign);
  const float* __restrict x = buf[0] + r.begin;
  float* __restrict y = buf[1] + r.begin;
  for (int64_t e = 0; e < r.size(); ++e) y[e] = x[e] > 0.0f ? x[e] : 0.0f;
}

void relu_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width, kAlign);
  const float* __restrict x = buf[0] + r.begin;
  const float* __restrict dy = buf[1] + r.begin;
  float* __restrict dx = buf[2] + r.begin;
  for (int64_t e = 0; e < r.size(); ++e) dx[e] = x[e] > 0.0f ? dy[e] : 0.0f;
}

}  // namespace corun::codelets
