// Fast matmul: one single-threaded sgemm per tile of C, on the library chosen for the node (gemm_impls.hpp:
// OpenBLAS or oneDNN's sgemm).
//
// Why fixed tiles instead of one sgemm per member: OpenBLAS (oneDNN alike) does not give the same bits for
// an element of C when it is computed inside differently shaped sub-GEMMs (measured on OpenBLAS 0.3.21, Haswell
// kernels: its micro-kernel and edge handling group rows/columns depending on the call's M and N, so
// splitting C at 16- or 32-aligned boundaries still changed results). The tiling below depends only on
// (M, N); a member runs its contiguous run of tiles one sgemm call each, so every tile is the identical
// call at any width and the result is bitwise width-independent by construction. A tile of 128 rows or
// columns costs a product little against one big call (the repacked operand is amortised); see the tiling.
#include "codelets/matmul/matmul.hpp"
#include "codelets/matmul/sgemm_backend.hpp"

#include "base/check.hpp"

#include <algorithm>

namespace corun::codelets {

MatmulTiling matmul_tiling(int64_t m, int64_t n) {
  // Tile the larger dimension: each tile repacks the whole other operand, so the cost per tile is
  // smallest relative to its work along the longer side.
  const bool rows = m >= n;
  const int64_t extent = rows ? m : n;
  // Aim for ~8 tiles in multiples of 16 (a multiple of sgemm register blocks), between 32 (16-wide tiles
  // measured ~20% slower on 128^3, and such small products gain little from wider teams) and 128: each tile
  // packs the other operand again, which a product with few rows pays for. One thread, quiet AMD Zen 4,
  // oneDNN's sgemm: LSTM medium's forward [64, 1024] x [1024, 2048] 69-72 GF/s in 64-column tiles, 80-87 in
  // 128-column ones (84-93 as one call); its weight gradient [1024, 256]^T x [256, 2048] 82 -> 99-100.
  const int64_t per8 = (extent + 7) / 8;
  const int64_t tile = std::clamp<int64_t>((per8 + 15) / 16 * 16, 32, 128);
  return MatmulTiling{rows, tile, (extent + tile - 1) / tile};
}

void matmul_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  const Shape& sc = call.shapes[2];
  CORUN_ASSERT(sa.rank == 2 && call.shapes[1].rank == 2 && sc.rank == 2);
  const bool trans_a = call.i[0] != 0;
  const bool trans_b = call.i[1] != 0;
  const float beta = call.i[2] != 0 ? 1.0f : 0.0f;
  const int64_t m = sc[0];
  const int64_t n = sc[1];
  const int64_t k = trans_a ? sa[0] : sa[1];
  const int64_t lda = trans_a ? m : k;
  const int64_t ldb = trans_b ? k : n;
  const float* a = buf[0];
  const float* b = buf[1];
  float* c = buf[2];

  const GemmImpl impl = gemm_impl_of(call);  // the same for every tile and member: the node's choice
  const MatmulTiling tiling = matmul_tiling(m, n);
  const Range tiles = split_range(tiling.count, rank, width);
  for (int64_t t = tiles.begin; t < tiles.end; ++t) {
    const int64_t first = t * tiling.tile;
    if (tiling.rows) {
      const int64_t rows = std::min(tiling.tile, m - first);
      const float* a_tile = trans_a ? a + first : a + first * k;
      sgemm_rowmajor(impl, trans_a, trans_b, rows, n, k, a_tile, lda, b, ldb, beta, c + first * n, n);
    } else {
      const int64_t cols = std::min(tiling.tile, n - first);
      const float* b_tile = trans_b ? b + first * k : b + first;
      sgemm_rowmajor(impl, trans_a, trans_b, m, cols, k, a, lda, b_tile, ldb, beta, c + first, n);
    }
  }
}

}  // namespace corun::codelets
