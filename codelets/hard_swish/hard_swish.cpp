// hard_swish's kernels: the shared elementwise loops over its scalar formulas (codelets/elementwise.hpp).
#include "codelets/hard_swish/hard_swish.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {

void hard_swish_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_ref([](float x) { return ew::hard_swish_ref(x); }, call, buf, rank, width);
}
void hard_swish_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::unary_fast([](float x) { return ew::hard_swish_fast(x); }, call, buf, rank, width);
}
void hard_swish_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_ref([](float x, float dy) { return ew::hard_swish_grad_ref(x, dy); }, call, buf, rank, width);
}
void hard_swish_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_fast([](float x, float dy) { return ew::hard_swish_grad_fast(x, dy); }, call, buf, rank, width);
}

}  // namespace corun::codelets
