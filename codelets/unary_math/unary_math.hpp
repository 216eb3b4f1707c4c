// unary_math: the same-shape elementwise math ops of ONNX (issue 19). Buffers X, Y (forward) and
// first, dY, dX (gradients; `first` is Y for sqrt, exp and reciprocal, X for the others, see ops.def).
// sqrt, erf, exp, log, neg, abs, reciprocal and their gradients are chainable: their formulas live in
// codelets/elementwise.hpp and their kernels are one line each through elementwise_kernels.hpp.
// clip carries two float attributes (lo, hi as float bits in i[0], i[1]), so ew_chain cannot fuse it; its
// formula is ew::clip_fast, which a convolution's fused activation shares (conv2d.hpp).
#pragma once

#include "codelets/op.hpp"

#include <cstdint>
#include <cstring>

namespace corun::codelets {

/// The bits of a float attribute, as clip stores lo and hi in OpCall::i.
inline int64_t float_attr_bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return static_cast<int64_t>(bits);
}

inline float float_from_attr_bits(int64_t attr) {
  const auto bits = static_cast<uint32_t>(attr);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// The float attribute stored in i[k].
inline float float_attr(const OpCall& call, int k) {
  return float_from_attr_bits(call.i[static_cast<size_t>(k)]);
}

#define CORUN_UNARY_MATH_KERNELS(name)                                         \
  void name##_ref(const OpCall& call, float* const* buf, int rank, int width); \
  void name##_fast(const OpCall& call, float* const* buf, int rank, int width);
CORUN_UNARY_MATH_KERNELS(sqrt)
CORUN_UNARY_MATH_KERNELS(sqrt_grad)
CORUN_UNARY_MATH_KERNELS(erf)
CORUN_UNARY_MATH_KERNELS(erf_grad)
CORUN_UNARY_MATH_KERNELS(exp)
CORUN_UNARY_MATH_KERNELS(exp_grad)
CORUN_UNARY_MATH_KERNELS(log)
CORUN_UNARY_MATH_KERNELS(log_grad)
CORUN_UNARY_MATH_KERNELS(neg)
CORUN_UNARY_MATH_KERNELS(abs)
CORUN_UNARY_MATH_KERNELS(abs_grad)
CORUN_UNARY_MATH_KERNELS(reciprocal)
CORUN_UNARY_MATH_KERNELS(reciprocal_grad)
CORUN_UNARY_MATH_KERNELS(clip)
CORUN_UNARY_MATH_KERNELS(clip_grad)
#undef CORUN_UNARY_MATH_KERNELS

}  // namespace corun::codelets
