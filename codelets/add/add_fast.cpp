// Fast add: contiguous loops over this member's 16-aligned element block. For a bias the block is cut at
// row boundaries so each piece is a plain vectorisable loop over A's row and B.
#include "codelets/add/add.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC -O2
// (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide inner
// loop; the scalar tail handles the end of a row or of the tensor.
constexpr int kBlock = 16;

void add_span(const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) c[e + j] = a[e + j] + b[e + j];
  for (; e < n; ++e) c[e] = a[e] + b[e];
}

}  // namespace

void add_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  const Range r = split_range(numel(call, 2), rank, width, kBlock);
  if (r.size() <= 0) return;
  const float* a = buf[0];
  const float* b = buf[1];
  float* c = buf[2];
  if (call.shapes[1] == sa) {
    add_span(a + r.begin, b + r.begin, c + r.begin, r.size());
    return;
  }
  const int64_t cols = sa[sa.rank - 1];
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t col = e % cols;
    const int64_t len = std::min(cols - col, r.end - e);
    add_span(a + e, b + col, c + e, len);
    e += len;
  }
}

}  // namespace corun::codelets
