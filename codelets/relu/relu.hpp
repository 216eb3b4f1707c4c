// relu: Y = max(X, 0) (X > 0 ? X : 0, so -0 and NaN map to 0); buffers X, Y.
// relu_grad: dX = X > 0 ? dY : 0; buffers X, dY, dX (X is the forward input).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void relu_ref(const OpCall& call, float* const* buf, int rank, int width);
void relu_fast(const OpCall& call, float* const* buf, int rank, int width);
void relu_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void relu_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
