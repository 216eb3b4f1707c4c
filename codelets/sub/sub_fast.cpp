// Fast sub: one restrict-qualified loop over this member's 16-aligned element block.
#include "codelets/sub/sub.hpp"

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC -O2
// (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide inner
// loop; member blocks are multiples of 16, so the scalar tail runs only at the end of the tensor.
constexpr int kBlock = 16;

void sub_span(const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) c[e + j] = a[e + j] - b[e + j];
  for (; e < n; ++e) c[e] = a[e] - b[e];
}

}  // namespace

void sub_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width, kBlock);
  if (r.size() <= 0) return;
  sub_span(buf[0] + r.begin, buf[1] + r.begin, buf[2] + r.begin, r.size());
}

}  // namespace corun::codelets
