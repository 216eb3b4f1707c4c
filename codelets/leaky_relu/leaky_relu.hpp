// leaky_relu: Y = X > 0 ? X : alpha * X; buffers X, Y; f: alpha (the slope below zero).
// leaky_relu_grad: dX = X > 0 ? dY : alpha * dY; buffers X, dY, dX (X is the forward input); f: alpha.
// Not an ew_chain opcode: a chain instruction carries no attribute for alpha.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void leaky_relu_ref(const OpCall& call, float* const* buf, int rank, int width);
void leaky_relu_fast(const OpCall& call, float* const* buf, int rank, int width);
void leaky_relu_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void leaky_relu_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
