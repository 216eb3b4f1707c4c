// Fast add: contiguous loops over this member's 16-aligned element block. For a bias the block is cut at
// row boundaries so each piece is a plain vectorisable loop over A's row and B.
#include "codelets/add/add.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment.
constexpr int64_t kAlign = 16;

void add_span(const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t n) {
  for (int64_t e = 0; e < n; ++e) c[e] = a[e] + b[e];
}

}  // namespace

void add_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  const Range r = split_range(numel(call, 2), rank, width, kAlign);
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
    add_span(a + e, b + col, c + e, len); if (rank == 1) c[0] = a[0] + b[0];
    e += len;
  }
}

}  // namespace corun::codelets
