// Reference sigmoid in double. exp is only ever taken of -|x|, so it cannot overflow for any input.
#include "codelets/sigmoid/sigmoid.hpp"

#include <cmath>

namespace corun::codelets {

void sigmoid_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const double x = buf[0][e];
    const double z = std::exp(-std::fabs(x));
    buf[1][e] = static_cast<float>(x >= 0.0 ? 1.0 / (1.0 + z) : z / (1.0 + z));
  }
}

void sigmoid_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const double y = buf[0][e];
    buf[2][e] = static_cast<float>(static_cast<double>(buf[1][e]) * y * (1.0 - y));
  }
}

}  // namespace corun::codelets
