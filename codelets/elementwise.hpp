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
#include <cstdint>

namespace corun::codelets::ew {

// ---- fast (float) ----

inline float add_fast(float a, float b) { return a + b; }
inline float sub_fast(float a, float b) { return a - b; }
inline float mul_fast(float a, float b) { return a * b; }

/// exp(x) for x <= 0 in float, without libm: Cephes' expf (x = n ln 2 + r with ln 2 in two parts, a degree-6
/// polynomial in r, 2^n built in the exponent bits), within 2 ulp of exp (EwMath.* in tests/unit checks it
/// against double). Branch-free, so that the loops calling it vectorise (the kernels are built with
/// -fno-trapping-math, which lets GCC turn its selects into vector blends): libm's expf and tanhf are calls the
/// vectoriser cannot widen, and the scalar calls made a fused LSTM cell of 64 x 128 units take 0.5 ms, more
/// than its matmul (issue 18 item 2). Below -87.3, where 2^n would leave the normal floats, it returns 0
/// (exp is below 1.2e-38 there); NaN stays NaN.
inline float exp_nonpositive_fast(float x) {
  const float xc = x < -87.3f ? -87.3f : x;
  const float t = xc * 1.44269504088896341f + 12582912.0f;  // 1.5 * 2^23: t's low bits hold round(x / ln 2)
  const float n = t - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t scale = (__builtin_bit_cast(int32_t, t) - 0x4B400000 + 127) << 23;  // 2^n, n in [-126, 0]
  const float y = p * __builtin_bit_cast(float, scale);
  return x < -87.3f ? 0.0f : y;
}
/// exp(-|x|) lies in (0, 1], so neither branch can produce inf or NaN however large |x| is; the select
/// keeps a loop body branch-free.
inline float sigmoid_fast(float x) {
  const float z = exp_nonpositive_fast(-std::fabs(x));
  const float inv = 1.0f / (1.0f + z);
  return x >= 0.0f ? inv : z * inv;
}
/// Cephes' tanhf, branch-free: an odd polynomial below |x| = 0.625, (1 - e) / (1 + e) with e = exp(-2|x|) above
/// (no cancellation there: e < 0.29); saturates to +-1, keeps the sign of -0, NaN stays NaN.
inline float tanh_fast(float x) {
  const float a = std::fabs(x);
  const float z = a * a;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * a + a;
  const float e = exp_nonpositive_fast(-2.0f * a);
  const float large = (1.0f - e) / (1.0f + e);
  return std::copysign(a < 0.625f ? small : large, x);
}
/// -0 maps to 0; NaN stays NaN, as in PyTorch and IEEE 754-2019 maximum (`x > 0 ? x : 0` made a NaN input 0, so a
/// network fed NaN gave plausible logits). One compare, so the loops still vectorise.
inline float relu_fast(float x) { return !(x <= 0.0f) ? x : 0.0f; }
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
/// At a NaN X the gradient passes, as relu passes the NaN (PyTorch's threshold_backward: x <= 0 ? 0 : dy).
inline float relu_grad_fast(float x, float dy) { return !(x <= 0.0f) ? dy : 0.0f; }
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
/// sign(NaN) is NaN (IEEE, NumPy): a NaN X gives a NaN gradient instead of the 0 of the other comparisons.
inline float abs_grad_fast(float x, float dy) { return x > 0.0f ? dy : (x < 0.0f ? -dy : (x == 0.0f ? 0.0f : x)); }
inline float abs_grad_ref(float x, float dy) { return abs_grad_fast(x, dy); }
inline float reciprocal_fast(float x) { return 1.0f / x; }
inline float reciprocal_ref(float x) { return 1.0f / x; }
/// d(1/x) = -1/x^2 = -y^2: from the output Y.
inline float reciprocal_grad_fast(float y, float dy) { return -dy * (y * y); }
inline float reciprocal_grad_ref(float yf, float dy) {
  const double y = yf;
  return static_cast<float>(-static_cast<double>(dy) * y * y);
}

// ---- issue 51: MobileNetV3's hard activations ----
// HardSigmoid carries alpha and beta, so ew_chain cannot fuse it (a chain instruction has no attribute);
// HardSwish has fixed constants and is chainable. A convolution's fused activation calls the same functions
// (codelets/conv2d/conv2d.hpp), so fusing keeps the bits. Written as selects, never std::min/std::max: those
// return their first argument when the comparison is false, so min(max(t, 0), 1) or max(0, .) drop a NaN
// depending on the argument order. With the comparisons below a NaN fails every test and falls through.

/// ONNX HardSigmoid: max(0, min(1, alpha x + beta)) (PyTorch's nn.Hardsigmoid exports alpha = 1/6, beta = 1/2).
inline float hard_sigmoid_fast(float x, float alpha, float beta) {
  const float t = alpha * x + beta;
  return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
}
inline float hard_sigmoid_ref(float x, float alpha, float beta) {
  const double t = static_cast<double>(alpha) * x + beta;
  return static_cast<float>(t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t));
}
/// PyTorch's hardsigmoid_backward passes alpha * dY on the open interval only (x > -3 && x < 3 for its 1/6,
/// 1/2): at the kinks, where alpha x + beta is exactly 0 or 1, the gradient is 0. The test is the forward's
/// float t in both kernels, so the reference takes the same side at a kink; alpha * dY is one rounding, exact
/// in the reference too. A NaN X gives 0, as in PyTorch (both comparisons are false): X only picks the branch.
inline float hard_sigmoid_grad_fast(float x, float dy, float alpha, float beta) {
  const float t = alpha * x + beta;
  return t > 0.0f && t < 1.0f ? alpha * dy : 0.0f;
}
inline float hard_sigmoid_grad_ref(float x, float dy, float alpha, float beta) {
  return hard_sigmoid_grad_fast(x, dy, alpha, beta);
}
/// x * relu6(x + 3) / 6, PyTorch's formula and order of operations (its hardswish kernel), which is ONNX
/// HardSwish's x * max(0, min(1, x / 6 + 1/2)) in exact arithmetic. hard_swish(-inf) is -inf * 0 = NaN, as in
/// PyTorch.
inline float hard_swish_fast(float x) {
  const float s = x + 3.0f;
  const float c = s < 0.0f ? 0.0f : (s > 6.0f ? 6.0f : s);
  return x * c / 6.0f;
}
inline float hard_swish_ref(float xf) {
  const double x = xf;
  const double s = x + 3.0;
  return static_cast<float>(x * (s < 0.0 ? 0.0 : (s > 6.0 ? 6.0 : s)) / 6.0);
}
/// PyTorch's hardswish_backward: 0 below -3, dY above 3, dY (x / 3 + 1/2) on the closed interval [-3, 3]
/// (so -dY/2 at -3 and 3 dY/2 at 3: the kinks take the middle piece's slope). The middle piece is the last
/// branch here so that a NaN X gives a NaN dX (PyTorch's scalar code passes dY there; the finite values are
/// the same).
inline float hard_swish_grad_fast(float x, float dy) {
  return x < -3.0f ? 0.0f : (x > 3.0f ? dy : dy * (x / 3.0f + 0.5f));
}
inline float hard_swish_grad_ref(float xf, float dy) {
  const double x = xf;
  return static_cast<float>(x < -3.0 ? 0.0 : (x > 3.0 ? dy : static_cast<double>(dy) * (x / 3.0 + 0.5)));
}

}  // namespace corun::codelets::ew
