// sigmoid: Y = 1 / (1 + exp(-X)); buffers X, Y.
// sigmoid_grad: dX = dY * Y * (1 - Y); buffers Y, dY, dX (Y is the forward output).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void sigmoid_ref(const OpCall& call, float* const* buf, int rank, int width);
void sigmoid_fast(const OpCall& call, float* const* buf, int rank, int width);
void sigmoid_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void sigmoid_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
