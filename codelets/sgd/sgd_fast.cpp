// Fast sgd: one restrict-qualified update loop over this member's 16-aligned block of W.
#include "codelets/sgd/sgd.hpp"

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment.
constexpr int64_t kAlign = 16;

}  // namespace

void sgd_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width, kAlign);
  float* __restrict w = buf[0] + r.begin;
  const float* __restrict g = buf[1] + r.begin;
  const float lr = call.f;
  for (int64_t e = 0; e < r.size(); ++e) w[e] -= lr * g[e];
}

}  // namespace corun::codelets
