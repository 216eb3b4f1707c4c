// Reference tanh in double, one element at a time.
#include "codelets/tanh/tanh.hpp"

#include <cmath>

namespace corun::codelets {

void tanh_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e)
    buf[1][e] = static_cast<float>(std::tanh(static_cast<double>(buf[0][e])));
}

void tanh_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const double y = buf[0][e];
    buf[2][e] = static_cast<float>(static_cast<double>(buf[1][e]) * (1.0 - y * y));
  }
}

}  // namespace corun::codelets
