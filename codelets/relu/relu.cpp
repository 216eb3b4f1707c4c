// relu's kernels: the shared elementwise loops over its scalar formulas (codelets/elementwise.hpp).
#include "codelets/relu/relu.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {

void relu_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_ref([](float x) { return ew::relu_ref(x); }, call, buf, rank, width);
}
void relu_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_fast([](float x) { return ew::relu_fast(x); }, call, buf, rank, width);
}
void relu_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_ref([](float a, float dy) { return ew::relu_grad_ref(a, dy); }, call, buf, rank, width);
}
void relu_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_fast([](float a, float dy) { return ew::relu_grad_fast(a, dy); }, call, buf, rank, width);
}

}  // namespace corun::codelets
