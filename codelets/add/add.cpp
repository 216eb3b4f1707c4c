// add's kernels: the shared elementwise loops (codelets/elementwise_kernels.hpp). For a bias the member's
// block is cut at row boundaries so each piece is a plain vectorisable loop over A's row and B.
#include "codelets/add/add.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

#include <algorithm>

namespace corun::codelets {

void add_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  if (call.shapes[1] == sa)
    return ew::binary_ref([](float a, float b) { return ew::add_ref(a, b); }, call, buf, rank, width);
  const int64_t cols = sa[sa.rank - 1];
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[2][e] = ew::add_ref(buf[0][e], buf[1][e % cols]);
}

void add_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const auto add = [](float a, float b) { return ew::add_fast(a, b); };
  const Shape& sa = call.shapes[0];
  if (call.shapes[1] == sa) return ew::binary_fast(add, call, buf, rank, width);
  const Range r = split_range(numel(call, 2), rank, width, ew::kBlock);
  const int64_t cols = sa[sa.rank - 1];
  for (int64_t e = r.begin; e < r.end;) {
    const int64_t col = e % cols;
    const int64_t len = std::min(cols - col, r.end - e);
    ew::map2(add, buf[0] + e, buf[1] + col, buf[2] + e, len);
    e += len;
  }
}

}  // namespace corun::codelets
