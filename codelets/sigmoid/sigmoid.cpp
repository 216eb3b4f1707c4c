// sigmoid's kernels: the shared elementwise loops over its scalar formulas (codelets/elementwise.hpp).
#include "codelets/sigmoid/sigmoid.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {

void sigmoid_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_ref([](float x) { return ew::sigmoid_ref(x); }, call, buf, rank, width);
}
void sigmoid_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_fast([](float x) { return ew::sigmoid_fast(x); }, call, buf, rank, width);
}
void sigmoid_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_ref([](float a, float dy) { return ew::sigmoid_grad_ref(a, dy); }, call, buf, rank, width);
}
void sigmoid_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_fast([](float a, float dy) { return ew::sigmoid_grad_fast(a, dy); }, call, buf, rank, width);
}

}  // namespace corun::codelets
