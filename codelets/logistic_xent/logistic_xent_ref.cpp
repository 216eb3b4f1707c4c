// Reference logistic_xent and its gradient, in double.
#include "codelets/logistic_xent/logistic_xent.hpp"

#include <algorithm>
#include <cmath>

namespace corun::codelets {

void logistic_xent_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const double z = buf[0][e], t = buf[1][e];
    buf[2][e] = static_cast<float>(std::max(z, 0.0) - t * z + std::log1p(std::exp(-std::fabs(z))));
  }
}

void logistic_xent_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const double z = buf[0][e], t = buf[1][e], dl = buf[2][e];
    buf[3][e] = static_cast<float>((1.0 / (1.0 + std::exp(-z)) - t) * dl);
  }
}

}  // namespace corun::codelets
