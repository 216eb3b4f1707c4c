// Reference relu, one element at a time.
#include "codelets/relu/relu.hpp"

namespace corun::codelets {

void relu_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[1][e] = buf[0][e] > 0.0f ? buf[0][e] : 0.0f;
}

void relu_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[2][e] = buf[0][e] > 0.0f ? buf[1][e] : 0.0f;
}

}  // namespace corun::codelets
