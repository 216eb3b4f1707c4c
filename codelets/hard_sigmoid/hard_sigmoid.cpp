// hard_sigmoid's kernels: the shared elementwise loops over its scalar formulas (codelets/elementwise.hpp), with
// alpha and beta from the call.
#include "codelets/hard_sigmoid/hard_sigmoid.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"
#include "codelets/unary_math/unary_math.hpp"

namespace corun::codelets {

void hard_sigmoid_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = float_attr(call, 0), beta = float_attr(call, 1);
  ew::unary_ref([alpha, beta](float x) { return ew::hard_sigmoid_ref(x, alpha, beta); }, call, buf, rank, width);
}
void hard_sigmoid_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = float_attr(call, 0), beta = float_attr(call, 1);
  ew::unary_fast([alpha, beta](float x) { return ew::hard_sigmoid_fast(x, alpha, beta); }, call, buf, rank, width);
}
void hard_sigmoid_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = float_attr(call, 0), beta = float_attr(call, 1);
  ew::binary_ref([alpha, beta](float x, float dy) { return ew::hard_sigmoid_grad_ref(x, dy, alpha, beta); }, call,
                 buf, rank, width);
}
void hard_sigmoid_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const float alpha = float_attr(call, 0), beta = float_attr(call, 1);
  ew::binary_fast([alpha, beta](float x, float dy) { return ew::hard_sigmoid_grad_fast(x, dy, alpha, beta); }, call,
                  buf, rank, width);
}

}  // namespace corun::codelets
