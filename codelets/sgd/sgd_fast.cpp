// Fast sgd: one restrict-qualified update loop over this member's 16-aligned block of W.
#include "codelets/sgd/sgd.hpp"

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC -O2
// (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide inner
// loop; member blocks are multiples of 16, so the scalar tail runs only at the end of the tensor.
constexpr int kBlock = 16;

void sgd_span(float* __restrict w, const float* __restrict g, float lr, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) w[e + j] -= lr * g[e + j];
  for (; e < n; ++e) w[e] -= lr * g[e];
}

}  // namespace

void sgd_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width, kBlock);
  if (r.size() <= 0) return;
  sgd_span(buf[0] + r.begin, buf[1] + r.begin, call.f, r.size());
}

}  // namespace corun::codelets
