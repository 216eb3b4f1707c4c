// sum: Y = f * (sum of X along dim i[0]), summed in index order; buffers X, Y. Y's shape is X's with dim
// removed (a 1-D X gives Y of shape [1]).
// sum_grad: dX = f * dY broadcast along dim i[0]; buffers dY, dX.
// Both view X as [outer, extent, inner] and Y as [outer, inner].
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void sum_ref(const OpCall& call, float* const* buf, int rank, int width);
void sum_fast(const OpCall& call, float* const* buf, int rank, int width);
void sum_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void sum_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
