// matmul: C[M,N] = op(A) * op(B) [+ C].  Buffers A, B, C; i[0] = transA, i[1] = transB, i[2] = accumulate.
// op(A) is [M,K] (A stored [K,M] when transposed), op(B) is [K,N] (B stored [N,K] when transposed).
// With accumulate C is readwrite and the product is added to it.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void matmul_ref(const OpCall& call, float* const* buf, int rank, int width);
void matmul_fast(const OpCall& call, float* const* buf, int rank, int width);

/// How matmul_fast cuts C into independent sgemm calls. It depends only on (M, N), never on the width,
/// so every tile is the same sgemm call whichever member runs it (see matmul_fast.cpp for why).
struct MatmulTiling {
  bool rows;      ///< tiles are row blocks of C (else column blocks)
  int64_t tile;   ///< rows (or columns) per tile; the last tile may be shorter
  int64_t count;  ///< number of tiles
};
MatmulTiling matmul_tiling(int64_t m, int64_t n);

}  // namespace corun::codelets
