// binary_bcast: C = A op B with numpy / ONNX multidirectional broadcasting; buffers A, B, C.
//   i[0]: the operation (BinaryOp). Shapes are aligned from the last dimension; each aligned pair is equal
//   or one of them is 1 (a missing leading dimension counts as 1). C has the broadcast shape.
// binary_bcast_grad: dX = the sum, over the dimensions X is broadcast along, of dC * d(A op B)/dX;
//   buffers A, B, dC, dX; i[0]: the operation, i[1]: which operand X is (0: A, 1: B).
//   Each member owns a range of dX's elements and sums all of an element's terms itself, in C's index
//   order, so the bits never depend on the team width (float accumulation in fast, double in ref).
//
// Every shape is viewed right-aligned in kMaxDims = 4 dimensions (BroadcastView); an operand's stride is 0
// along a dimension it is broadcast over.
#pragma once

#include "codelets/op.hpp"

#include <array>

namespace corun::codelets {

/// The operation of a binary_bcast node (i[0]). Stored in graphs: append only.
enum class BinaryOp : int64_t { add = 0, sub = 1, mul = 2, div = 3, pow = 4 };

/// "add", "sub", ... (for messages and node names).
const char* binary_op_name(BinaryOp op);

/// Extents right-aligned in kMaxDims dimensions (leading ones where s has fewer).
std::array<int64_t, kMaxDims> padded_extents(const Shape& s);
/// Strides of an operand of shape `s` read along the output extents `out` (both padded): 0 where s has
/// extent 1 and the output does not.
std::array<int64_t, kMaxDims> broadcast_strides(const Shape& s, const std::array<int64_t, kMaxDims>& out);
/// The padded index of element `e` of a row-major tensor of padded extents `ext` (the last dimension fastest).
std::array<int64_t, kMaxDims> unravel(int64_t e, const std::array<int64_t, kMaxDims>& ext);

void binary_bcast_ref(const OpCall& call, float* const* buf, int rank, int width);
void binary_bcast_fast(const OpCall& call, float* const* buf, int rank, int width);
void binary_bcast_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void binary_bcast_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
