// unary_math kernels: one line each through the shared elementwise loops, so the op's own node and an
// ew_chain that fused it compute every element by the same formula.
#include "codelets/unary_math/unary_math.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {

#define CORUN_UNARY(name)                                                               \
  void name##_ref(const OpCall& call, float* const* buf, int rank, int width) {         \
    ew::unary_ref([](float x) { return ew::name##_ref(x); }, call, buf, rank, width);   \
  }                                                                                     \
  void name##_fast(const OpCall& call, float* const* buf, int rank, int width) {        \
    ew::unary_fast([](float x) { return ew::name##_fast(x); }, call, buf, rank, width); \
  }
#define CORUN_BINARY(name)                                                                           \
  void name##_ref(const OpCall& call, float* const* buf, int rank, int width) {                      \
    ew::binary_ref([](float p, float q) { return ew::name##_ref(p, q); }, call, buf, rank, width);   \
  }                                                                                                  \
  void name##_fast(const OpCall& call, float* const* buf, int rank, int width) {                     \
    ew::binary_fast([](float p, float q) { return ew::name##_fast(p, q); }, call, buf, rank, width); \
  }

CORUN_UNARY(sqrt)
CORUN_BINARY(sqrt_grad)
CORUN_UNARY(erf)
CORUN_BINARY(erf_grad)
CORUN_UNARY(exp)
CORUN_BINARY(exp_grad)
CORUN_UNARY(log)
CORUN_BINARY(log_grad)
CORUN_UNARY(neg)
CORUN_UNARY(abs)
CORUN_BINARY(abs_grad)
CORUN_UNARY(reciprocal)
CORUN_BINARY(reciprocal_grad)
#undef CORUN_UNARY
#undef CORUN_BINARY

// clip: ONNX Clip / torch.clamp, ew::clip_fast (codelets/elementwise.hpp; convolutions fuse it too).
namespace {
inline float clip_value(float x, float lo, float hi) { return ew::clip_fast(x, lo, hi); }
// PyTorch's clamp backward: the gradient passes where lo <= x <= hi (ends included).
inline float clip_grad_value(float x, float dy, float lo, float hi) {
  return x >= lo && x <= hi ? dy : 0.0f;
}
}  // namespace

void clip_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const float lo = float_attr(call, 0), hi = float_attr(call, 1);
  ew::unary_ref([lo, hi](float x) { return clip_value(x, lo, hi); }, call, buf, rank, width);
}
void clip_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const float lo = float_attr(call, 0), hi = float_attr(call, 1);
  ew::unary_fast([lo, hi](float x) { return clip_value(x, lo, hi); }, call, buf, rank, width);
}
void clip_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const float lo = float_attr(call, 0), hi = float_attr(call, 1);
  ew::binary_ref([lo, hi](float x, float dy) { return clip_grad_value(x, dy, lo, hi); }, call, buf, rank, width);
}
void clip_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const float lo = float_attr(call, 0), hi = float_attr(call, 1);
  ew::binary_fast([lo, hi](float x, float dy) { return clip_grad_value(x, dy, lo, hi); }, call, buf, rank, width);
}

}  // namespace corun::codelets
