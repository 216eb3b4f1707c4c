// gelu's kernels: the shared elementwise loops over its scalar formulas (codelets/elementwise.hpp).
#include "codelets/gelu/gelu.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {

void gelu_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_ref([](float x) { return ew::gelu_ref(x); }, call, buf, rank, width);
}
void gelu_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_fast([](float x) { return ew::gelu_fast(x); }, call, buf, rank, width);
}
void gelu_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_ref([](float a, float dy) { return ew::gelu_grad_ref(a, dy); }, call, buf, rank, width);
}
void gelu_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_fast([](float a, float dy) { return ew::gelu_grad_fast(a, dy); }, call, buf, rank, width);
}

}  // namespace corun::codelets
