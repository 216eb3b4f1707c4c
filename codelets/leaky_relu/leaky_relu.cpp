// leaky_relu's kernels: the shared elementwise loops over its scalar formulas, with alpha from the call.
// The formulas live here, not in codelets/elementwise.hpp: only these kernels use them (not an ew_chain
// opcode).
#include "codelets/leaky_relu/leaky_relu.hpp"

#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {
namespace ew {

inline float leaky_relu_fast(float x, float alpha) {
  return x > 0.0f ? x : alpha * x;
}
inline float leaky_relu_grad_fast(float x, float dy, float alpha) {
  return x > 0.0f ? dy : alpha * dy;
}
// The product in double, rounded once (the same float for every alpha whose product is exact).
inline float leaky_relu_ref(float x, float alpha) {
  return x > 0.0f ? x : static_cast<float>(static_cast<double>(alpha) * x);
}
inline float leaky_relu_grad_ref(float x, float dy, float alpha) {
  return x > 0.0f ? dy : static_cast<float>(static_cast<double>(alpha) * dy);
}

}  // namespace ew

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
