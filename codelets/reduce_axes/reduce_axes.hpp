// reduce_axes: Y = f * (sum of X over the dimensions in the bit mask i[0]); buffers X, Y. Bit d is X's
//   dimension d. Y holds one element per combination of the kept dimensions, in X's order (ONNX ReduceSum /
//   ReduceMean: keepdims only changes Y's shape, not its layout, so Y's shape is not read).
//   Each member owns a range of Y's elements and sums each one's whole reduction itself, in X's index
//   order (float accumulation in fast, double in ref): the bits never depend on the team width.
// reduce_axes_grad: dX = f * dY broadcast along the same dimensions; buffers dY, dX (dX of X's shape).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void reduce_axes_ref(const OpCall& call, float* const* buf, int rank, int width);
void reduce_axes_fast(const OpCall& call, float* const* buf, int rank, int width);
void reduce_axes_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void reduce_axes_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
