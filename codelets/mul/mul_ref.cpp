// Reference mul: one element at a time.
#include "codelets/mul/mul.hpp"

namespace corun::codelets {

void mul_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[2][e] = buf[0][e] * buf[1][e];
}

}  // namespace corun::codelets
