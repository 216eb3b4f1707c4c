// leaky_relu's kernels: the shared elementwise loops over its scalar formulas (codelets/elementwise.hpp),
// with alpha from the call.
#include "codelets/leaky_relu/leaky_relu.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {

void leaky_relu_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = call.f;
  ew::unary_ref([alpha](float x) { return ew::leaky_relu_ref(x, alpha); }, call, buf, rank, width);
}
void leaky_relu_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = call.f;
  ew::unary_fast([alpha](float x) { return ew::leaky_relu_fast(x, alpha); }, call, buf, rank, width);
}
void leaky_relu_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = call.f;
  ew::binary_ref([alpha](float x, float dy) { return ew::leaky_relu_grad_ref(x, dy, alpha); }, call, buf, rank, width);
}
void leaky_relu_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = call.f;
  ew::binary_fast([alpha](float x, float dy) { return ew::leaky_relu_grad_fast(x, dy, alpha); }, call, buf, rank,
                  width);
}

}  // namespace corun::codelets
