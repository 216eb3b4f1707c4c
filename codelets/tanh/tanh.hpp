// tanh: Y = tanh(X); buffers X, Y.
// tanh_grad: dX = dY * (1 - Y^2); buffers Y, dY, dX (Y is the forward output).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void tanh_ref(const OpCall& call, float* const* buf, int rank, int width);
void tanh_fast(const OpCall& call, float* const* buf, int rank, int width);
void tanh_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void tanh_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
