// codelets/elementwise.hpp — the scalar formula of every elementwise op, one place for all kernels.
//
// sigmoid, tanh, relu and their gradients are computed by their own kernels, by the fused LSTM cell and by
// the fused elementwise chain (ew_chain). All of them call these functions, so a fused graph computes
// bitwise the same numbers as the unfused one with the same kernel choice. `fast` functions work in float
// (what the fast kernels run); `ref` functions are the specification in double, rounded once to float.
#pragma once

#include <cmath>

namespace corun::codelets::ew {

// ---- fast (float) ----

/// exp(-|x|) lies in (0, 1], so neither branch can produce inf or NaN however large |x| is; the select
/// keeps a loop body branch-free.
inline float sigmoid_fast(float x) {
  const float z = std::exp(-std::fabs(x));
  const float inv = 1.0f / (1.0f + z);
  return x >= 0.0f ? inv : z * inv;
}
/// std::tanh saturates to +-1, never NaN for finite x.
inline float tanh_fast(float x) { return std::tanh(x); }
inline float relu(float x) { return x > 0.0f ? x : 0.0f; }  // -0 and NaN map to 0
/// dX from the forward output Y and dY (evaluated left to right: (dy * y) * (1 - y)).
inline float sigmoid_grad_fast(float y, float dy) { return dy * y * (1.0f - y); }
inline float tanh_grad_fast(float y, float dy) { return dy * (1.0f - y * y); }
/// dX from the forward input X; dy is taken by value so callers load it unconditionally (if-conversion).
inline float relu_grad(float x, float dy) { return x > 0.0f ? dy : 0.0f; }

// ---- reference (double, rounded once) ----

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

}  // namespace corun::codelets::ew
