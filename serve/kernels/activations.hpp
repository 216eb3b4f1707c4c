// serve/kernels/activations.hpp — vectorised sigmoid and tanh for the RNN cells of the serving runtime.
//
// Both are within 1e-6 relative of the exact function (tests/serve/test_serve_activations.cpp sweeps every
// 2^-12 step of [-20, 20] and a coarser grid to +-100 against std::exp/std::tanh in double). AVX2+FMA when
// the CPU has it (checked once at run time), the same formulas in scalar code otherwise.
//
// Formulas (Cephes single precision): exp by range reduction x = n ln2 + r with ln2 split in two parts and
// a degree-5 polynomial for e^r; tanh by an odd polynomial below |x| = 0.625 (where 1 - 2/(e^2x + 1)
// cancels) and 1 - 2/(e^2|x| + 1) above; sigmoid = 1/(1 + e^-x). Inputs are clamped to [-87, 88] before
// exp, so no inf comes out (tanh(+-inf) = +-1, sigmoid(+-inf) = 1 or about 1.6e-38); NaN stays NaN, as in
// std::exp and PyTorch; sigmoid below -87 returns about 1.6e-38 (the exact value is a denormal).
#pragma once

#include <cstdint>

namespace corun::serve {

/// x[i] = 1 / (1 + exp(-x[i])) for i < n.
void sigmoid_inplace(float* x, int64_t n);
/// x[i] = tanh(x[i]) for i < n.
void tanh_inplace(float* x, int64_t n);
/// dst[i] = tanh(src[i]) for i < n (dst may equal src).
void tanh_copy(const float* src, float* dst, int64_t n);

/// True when the AVX2 path runs (for the start line and the tests).
bool activations_vectorised();

}  // namespace corun::serve
