// hard_swish: Y = X * min(max(X + 3, 0), 6) / 6 (ONNX HardSwish, PyTorch's nn.Hardswish); buffers X, Y.
// hard_swish_grad: dX = X < -3 ? 0 : X > 3 ? dY : dY * (X / 3 + 1/2); buffers X, dY, dX (X is the forward input).
// Both are ew_chain opcodes (formulas: codelets/elementwise.hpp).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void hard_swish_ref(const OpCall& call, float* const* buf, int rank, int width);
void hard_swish_fast(const OpCall& call, float* const* buf, int rank, int width);
void hard_swish_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void hard_swish_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
