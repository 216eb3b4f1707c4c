// gather (ONNX Gather, numpy take): Y = X indexed along dim a = i[0] by the N indices of idx (any shape).
// With X viewed as [outer, A, inner] and Y as [outer, N, inner]: Y[o, n, :] = X[o, idx[n], :]; Y's shape is
// X's with dim a replaced by idx's dims. Buffers X (R), idx (R), Y (W).
// gather_grad: dX[o, k, :] = sum over n with idx[n] == k of dY[o, n, :], added in n order (zero where no
// index hits). Buffers idx (R), dY (R), dX (W).
//
// Indices travel in an f32 buffer as embedding's do (exact integers); negative ones count from the end
// (ONNX: -A .. A-1). A value that is not an integer in range makes the kernel throw corun::Error naming
// the position, the value and A. Forward members own rows (o, n) of Y, backward members own rows (o, k) of
// dX and scan all N indices in order, so every sum has the same order at every width.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void gather_ref(const OpCall& call, float* const* buf, int rank, int width);
void gather_fast(const OpCall& call, float* const* buf, int rank, int width);
void gather_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void gather_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

/// idx[n] as a row in [0, extent) (negative values count from the end); throws corun::Error otherwise.
int64_t gather_index(const float* idx, int64_t n, int64_t extent, const char* op);

}  // namespace corun::codelets
