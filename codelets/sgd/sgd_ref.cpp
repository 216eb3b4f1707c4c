// Reference sgd, one weight at a time.
#include "codelets/sgd/sgd.hpp"

namespace corun::codelets {

void sgd_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[0][e] = buf[0][e] - call.f * buf[1][e];
}

}  // namespace corun::codelets
