// Fast batch_matmul: one single-threaded sgemm (on the node's library, gemm_impls.hpp: OpenBLAS or oneDNN) per
// (C entry, tile, summed full entry), the tiles those of the 2-D matmul (matmul_tiling: they depend only on M and N, so each is the same sgemm call at
// every width; see matmul_fast.cpp for why the libraries need that). The first product of an entry writes its
// tile (beta 0), the next ones add to it (beta 1) in increasing full-batch order.
#include "codelets/batch_matmul/batch_matmul.hpp"
#include "codelets/matmul/matmul.hpp"
#include "codelets/matmul/sgemm_backend.hpp"

#include <algorithm>

namespace corun::codelets {

void batch_matmul_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  const Shape& sc = call.shapes[2];
  const bool trans_a = call.i[0] != 0, trans_b = call.i[1] != 0;
  const int64_t m = sc[sc.rank - 2], n = sc[sc.rank - 1];
  const int64_t k = trans_a ? sa[sa.rank - 2] : sa[sa.rank - 1];
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  const BatchMap map = batch_map(call);
  const int64_t c_entries = sc.numel() / (m * n);
  const bool reduced = c_entries != map.count;  // a gradient of a broadcast operand
  const GemmImpl impl = gemm_impl_of(call);
  const MatmulTiling tiling = matmul_tiling(m, n);
  const Range items = split_range(c_entries * tiling.count, rank, width);
  for (int64_t it = items.begin; it < items.end; ++it) {
    const int64_t ce = it / tiling.count, t = it % tiling.count;
    const int64_t first = t * tiling.tile;
    const int64_t rows = tiling.rows ? std::min(tiling.tile, m - first) : m;
    const int64_t cols = tiling.rows ? n : std::min(tiling.tile, n - first);
    float* c = buf[2] + ce * m * n + (tiling.rows ? first * n : first);
    float beta = 0.0f;
    for (int64_t f = reduced ? 0 : ce; f < (reduced ? map.count : ce + 1); ++f) {
      if (reduced && map.entry(2, f) != ce) continue;
      const float* a = buf[0] + map.entry(0, f) * m * k;
      const float* b = buf[1] + map.entry(1, f) * k * n;
      if (tiling.rows)
        a += trans_a ? first : first * k;
      else
        b += trans_b ? first * k : first;
      sgemm_rowmajor(impl, trans_a, trans_b, rows, cols, k, a, lda, b, ldb, beta, c, n);
      beta = 1.0f;
    }
  }
}

}  // namespace corun::codelets
