// hard_sigmoid: Y = max(0, min(1, alpha * X + beta)) (ONNX HardSigmoid); buffers X, Y; i[0], i[1]: alpha's and
// beta's float bits (codelets::float_attr_bits, as clip stores its bounds).
// hard_sigmoid_grad: dX = 0 < alpha * X + beta < 1 ? alpha * dY : 0; buffers X, dY, dX (X is the forward
// input); the same attributes.
// Not an ew_chain opcode: a chain instruction carries no attribute for alpha and beta. Formulas:
// codelets/elementwise.hpp (a convolution's fused activation shares them).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void hard_sigmoid_ref(const OpCall& call, float* const* buf, int rank, int width);
void hard_sigmoid_fast(const OpCall& call, float* const* buf, int rank, int width);
void hard_sigmoid_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void hard_sigmoid_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
