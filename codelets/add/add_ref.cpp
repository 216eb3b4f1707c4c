// Reference add: one element at a time; the bias case indexes B by the column of the element.
#include "codelets/add/add.hpp"

namespace corun::codelets {

void add_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  const bool bias = call.shapes[1] != sa;
  const int64_t cols = sa[sa.rank - 1];
  const float* a = buf[0];
  const float* b = buf[1];
  float* c = buf[2];
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) c[e] = a[e] + (bias ? b[e % cols] : b[e]);
}

}  // namespace corun::codelets
