// batch_matmul (ONNX / numpy MatMul on >= 2-D operands): C[b] = sum over the batch entries b' that map to
// b of op(A[b']) * op(B[b']). Buffers A (R), B (R), C (W); i[0] = transA, i[1] = transB (op(A) swaps A's
// last two dims, as matmul's flags do).
//
// Batch dims are the dims before the last two, aligned from the right; an extent of 1 broadcasts (as in
// numpy). The full batch is the broadcast of all three operands' batch dims. In the forward product C's
// batch is the full batch, so each C entry is one product. The backward products (dA = dC B^T,
// dB = A^T dC) write a gradient whose batch is its operand's, smaller than the full batch where that
// operand was broadcast: each of its entries is then the sum of the products of the full entries mapping to
// it, added in increasing full-batch order (fixed, whichever member computes it).
//
// Work items are (C batch entry, tile of C) with matmul's width-independent tiling (matmul_tiling), so a
// team splits over batch entries and, when there are fewer entries than members, over row or column
// tiles of each product; never over K or over the summed batch entries.
#pragma once

#include "codelets/op.hpp"

#include <array>

namespace corun::codelets {

void batch_matmul_ref(const OpCall& call, float* const* buf, int rank, int width);
void batch_matmul_fast(const OpCall& call, float* const* buf, int rank, int width);

/// The batch geometry of a batch_matmul call: the full batch (right-aligned, kMaxDims - 2 dims at most)
/// and each operand's batch strides in matrices (0 along a broadcast dim).
struct BatchMap {
  int dims = 0;                                    ///< number of full batch dims
  std::array<int64_t, 4> full{};                   ///< full batch extents
  std::array<std::array<int64_t, 4>, 3> stride{};  ///< per operand (A, B, C): matrices per step of a dim
  int64_t count = 1;                               ///< product of full
  /// The matrix index of operand `op` (0 A, 1 B, 2 C) in full batch entry `f`.
  int64_t entry(int op, int64_t f) const;
};
BatchMap batch_map(const OpCall& call);

}  // namespace corun::codelets
