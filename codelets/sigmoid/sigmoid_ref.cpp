// Reference sigmoid in double, one element at a time (formulas: codelets/elementwise.hpp).
#include "codelets/elementwise.hpp"
#include "codelets/sigmoid/sigmoid.hpp"

namespace corun::codelets {

void sigmoid_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[1][e] = ew::sigmoid_ref(buf[0][e]);
}

void sigmoid_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[2][e] = ew::sigmoid_grad_ref(buf[0][e], buf[1][e]);
}

}  // namespace corun::codelets
