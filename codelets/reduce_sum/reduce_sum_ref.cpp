// Reference reduce_sum (double accumulation in index order) and reduce_sum_grad.
#include "codelets/reduce_sum/reduce_sum.hpp"

namespace corun::codelets {

void reduce_sum_ref(const OpCall& call, float* const* buf, int rank, int /*width*/) {
  if (rank != 0) return;
  const int64_t n = numel(call, 0);
  double acc = 0.0;
  for (int64_t e = 0; e < n; ++e) acc += static_cast<double>(buf[0][e]);
  buf[1][0] = static_cast<float>(static_cast<double>(call.f) * acc);
}

void reduce_sum_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[1][e] = call.f * buf[0][0];
}

}  // namespace corun::codelets
