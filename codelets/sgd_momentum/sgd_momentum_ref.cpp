// Reference sgd_momentum, one weight at a time.
#include "codelets/sgd_momentum/sgd_momentum.hpp"

namespace corun::codelets {

void sgd_momentum_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const float mu = sgd_momentum_mu(call);
  const Range r = split_range(numel(call, 0), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    buf[1][e] = mu * buf[1][e] + buf[2][e];
    buf[0][e] = buf[0][e] - call.f * buf[1][e];
  }
}

}  // namespace corun::codelets
