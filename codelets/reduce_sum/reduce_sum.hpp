// reduce_sum: Y[0] = f * (sum of every element of X); buffers X (R, any shape), Y (W, [1]).
// reduce_sum_grad: dX = f * dY[0] everywhere; buffers dY (R, [1]), dX (W, X's shape).
//
// The reduction is never split: member 0 sums everything and the other members of a team have nothing to
// do (the op's max width is 1, so the engine never forms a team for it), which keeps the result the same
// for every width. The gradient is a broadcast and splits its output elements.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void reduce_sum_ref(const OpCall& call, float* const* buf, int rank, int width);
void reduce_sum_fast(const OpCall& call, float* const* buf, int rank, int width);
void reduce_sum_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void reduce_sum_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
