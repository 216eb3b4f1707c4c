// codelets/elementwise.hpp — the scalar formula of every elementwise op, one place for all kernels.
//
// Every chainable elementwise op (add, sub, mul, sigmoid, tanh, relu, gelu and their gradients) is computed
// by its own kernels (through codelets/elementwise_kernels.hpp), and some also by the fused LSTM cell and
// by the fused elementwise chain (ew_chain, which finds ew::<op>_fast / _ref through the ew_arity column of
// codelets/ops.def). An elementwise op that is not chainable (leaky_relu: its alpha does not fit a chain
// instruction) keeps its formula in its own folder. All of them call these functions, so a fused graph computes bitwise the
// same numbers as the unfused one with the same kernel choice. `fast` functions work in float (what the
// fast kernels run); `ref` functions are the specification in double, rounded once to float (or the same
// float formula where float is already exact).
#pragma once

#include <cmath>

namespace corun::codelets::ew {

// ---- fast (float) ----

inline float add_fast(float a, float b) { return a + b; }
inline float sub_fast(float a, float b) { return a - b; }
inline float mul_fast(float a, float b) { return a * b; }

/// exp(-|x|) lies in (0, 1], so neither branch can produce inf or NaN however large |x| is; the select
/// keeps a loop body branch-free.
inline float sigmoid_fast(float x) {
  const float z = std::exp(-std::fabs(x));
  const float inv = 1.0f / (1.0f + z);
  return x >= 0.0f ? inv : z * inv;
}
/// std::tanh saturates to +-1, never NaN for finite x.
inline float tanh_fast(float x) { return std::tanh(x); }
inline float relu_fast(float x) { return x > 0.0f ? x : 0.0f; }  // -0 and NaN map to 0
/// ONNX Clip / torch.clamp: max(x, lo) then min(., hi); with lo > hi every element is hi, as in both. NaN
/// passes through (the comparisons are false for it), like torch.clamp. (Not chainable: lo and hi do not fit
/// a chain instruction; the clip op and the convolution's fused activation call it.)
inline float clip_fast(float x, float lo, float hi) {
  const float up = x < lo ? lo : x;
  return up > hi ? hi : up;
}
/// dX from the forward output Y and dY (evaluated left to right: (dy * y) * (1 - y)).
inline float sigmoid_grad_fast(float y, float dy) { return dy * y * (1.0f - y); }
inline float tanh_grad_fast(float y, float dy) { return dy * (1.0f - y * y); }
/// dX from the forward input X; dy is taken by value so callers load it unconditionally (if-conversion).
inline float relu_grad_fast(float x, float dy) { return x > 0.0f ? dy : 0.0f; }
/// The exact GELU, X * Phi(X) with Phi the standard normal CDF through erf (PyTorch's default, not its
/// tanh approximation). erf saturates to +-1 and exp(-x^2/2) underflows to 0: finite for every finite x.
inline float gelu_fast(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
/// d/dX of X * Phi(X) is Phi(X) + X * phi(X), phi the standard normal density.
inline float gelu_grad_fast(float x, float dy) {
  const float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * std::exp(-0.5f * x * x);
  return dy * (cdf + x * pdf);
}

// ---- reference (double, rounded once) ----

// One float operation is already correctly rounded: the reference is the same formula.
inline float add_ref(float a, float b) { return a + b; }
inline float sub_ref(float a, float b) { return a - b; }
inline float mul_ref(float a, float b) { return a * b; }
inline float relu_ref(float x) { return relu_fast(x); }
inline float relu_grad_ref(float x, float dy) { return relu_grad_fast(x, dy); }
inline float gelu_ref(float xf) {
  const double x = xf;
  return static_cast<float>(0.5 * x * (1.0 + std::erf(x * 0.70710678118654752)));
}
inline float gelu_grad_ref(float xf, float dy) {
  const double x = xf;
  const double cdf = 0.5 * (1.0 + std::erf(x * 0.70710678118654752));
  const double pdf = 0.39894228040143268 * std::exp(-0.5 * x * x);
  return static_cast<float>(static_cast<double>(dy) * (cdf + x * pdf));
}

inline float sigmoid_ref(float xf) {
  const double x = xf;
  const double z = std::exp(-std::fabs(x));  // only ever of -|x|: cannot overflow
  return static_cast<float>(x >= 0.0 ? 1.0 / (1.0 + z) : z / (1.0 + z));
}
inline float tanh_ref(float x) { return static_cast<float>(std::tanh(static_cast<double>(x))); }
inline float sigmoid_grad_ref(float yf, float dy) {
  const double y = yf;
  return static_cast<float>(static_cast<double>(dy) * y * (1.0 - y));
}
inline float tanh_grad_ref(float yf, float dy) {
  const double y = yf;
  return static_cast<float>(static_cast<double>(dy) * (1.0 - y * y));
}

// ---- issue 19: unary math (sqrt, erf, exp, log, neg, abs, reciprocal and their gradients) ----
// Outside their domain they give what IEEE gives (sqrt(-1) and log(-1) NaN, log(0) -inf, 1/0 inf), as
// ONNX and PyTorch do. Single float operations are correctly rounded, so their reference is the same formula.

inline float sqrt_fast(float x) { return std::sqrt(x); }
inline float sqrt_ref(float x) { return std::sqrt(x); }
/// d sqrt(x) = 0.5 / sqrt(x): from the output Y.
inline float sqrt_grad_fast(float y, float dy) { return dy * (0.5f / y); }
inline float sqrt_grad_ref(float y, float dy) { return static_cast<float>(0.5 * static_cast<double>(dy) / y); }
inline float erf_fast(float x) { return std::erf(x); }
inline float erf_ref(float x) { return static_cast<float>(std::erf(static_cast<double>(x))); }
/// d erf(x) = 2/sqrt(pi) exp(-x^2): underflows to 0 for large |x|, never NaN.
inline float erf_grad_fast(float x, float dy) { return dy * (1.12837916709551257f * std::exp(-x * x)); }
inline float erf_grad_ref(float xf, float dy) {
  const double x = xf;
  return static_cast<float>(static_cast<double>(dy) * 1.12837916709551257 * std::exp(-x * x));
}
inline float exp_fast(float x) { return std::exp(x); }
inline float exp_ref(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }
inline float exp_grad_fast(float y, float dy) { return dy * y; }
inline float exp_grad_ref(float y, float dy) { return dy * y; }
inline float log_fast(float x) { return std::log(x); }
inline float log_ref(float x) { return static_cast<float>(std::log(static_cast<double>(x))); }
inline float log_grad_fast(float x, float dy) { return dy / x; }
inline float log_grad_ref(float x, float dy) { return dy / x; }
inline float neg_fast(float x) { return -x; }
inline float neg_ref(float x) { return -x; }
inline float abs_fast(float x) { return std::fabs(x); }
inline float abs_ref(float x) { return std::fabs(x); }
/// sign(x) * dy with sign(0) = 0 (PyTorch's subgradient at the kink).
inline float abs_grad_fast(float x, float dy) { return x > 0.0f ? dy : (x < 0.0f ? -dy : 0.0f); }
inline float abs_grad_ref(float x, float dy) { return abs_grad_fast(x, dy); }
inline float reciprocal_fast(float x) { return 1.0f / x; }
inline float reciprocal_ref(float x) { return 1.0f / x; }
/// d(1/x) = -1/x^2 = -y^2: from the output Y.
inline float reciprocal_grad_fast(float y, float dy) { return -dy * (y * y); }
inline float reciprocal_grad_ref(float yf, float dy) {
  const double y = yf;
  return static_cast<float>(-static_cast<double>(dy) * y * y);
}

}  // namespace corun::codelets::ew
