// gelu: Y = X * Phi(X), Phi the standard normal CDF (the exact erf form, PyTorch's default); buffers X, Y.
// gelu_grad: dX = dY * (Phi(X) + X * phi(X)); buffers X, dY, dX (X is the forward input).
// Both are ew_chain opcodes (formulas: codelets/elementwise.hpp).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void gelu_ref(const OpCall& call, float* const* buf, int rank, int width);
void gelu_fast(const OpCall& call, float* const* buf, int rank, int width);
void gelu_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void gelu_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
