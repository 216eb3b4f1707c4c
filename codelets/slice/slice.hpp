// slice: Y = X[.., start : start+len, ..] along dim; i[0] = dim, i[1] = start, i[2] = len; buffers X, Y.
// slice_grad: dX = zeros with dY placed at [start, start+len) along dim; same attributes; buffers dY, dX.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void slice_ref(const OpCall& call, float* const* buf, int rank, int width);
void slice_fast(const OpCall& call, float* const* buf, int rank, int width);
void slice_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void slice_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
