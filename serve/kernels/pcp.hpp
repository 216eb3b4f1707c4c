// serve/kernels/pcp.hpp — private-cache-aware partitioning (DeepCPU section 5.2.3).
//
// An MM C[I,J] = sum_k A[I,K] B[K,J] split P ways as Xi x Xj x Xk blocks moves, per Theorem 5.2,
// Xj|A| + Xi|B| + 2 Xk|C| bytes between the shared L3 and the private L2s (the paper's text swaps Xi/Xj in
// two places; its proof gives this form: every one of the Xj column blocks reads all of A, and so on).
// Across the `seq` identical steps of an RNN the weights B are read once when a core's block of B,
// |B| / (Xj Xk), fits in its L2 and the block -> core mapping never changes (WCS):
//
//   seq (Xj|A| + 2 Xk|C|) + Xi|B|        if |B| / (Xj Xk) <= |L2|
//   seq (Xj|A| + Xi|B| + 2 Xk|C|)        otherwise
//
// The chooser minimises this over every factorisation of P. corun never splits K by default: a K split
// needs a reduction of partial sums whose order would depend on the partition (docs/serving.md).
#pragma once

#include <cstdint>
#include <vector>

namespace corun::serve {

/// C[I,J] = A[I,K] B[K,J]; B is the weight matrix reused across steps. Sizes in elements.
struct MatmulShape {
  int64_t i = 0, j = 0, k = 0;
};

struct Partition {
  int xi = 1, xj = 1, xk = 1;
  double traffic_bytes = 0.0;  ///< the piecewise formula's value
  bool weights_fit_l2 = false; ///< |B| / (Xj Xk) <= L2
};

/// The piecewise L3 -> L2 traffic (bytes) of `seq` steps under partition (xi, xj, xk).
double pcp_traffic(const MatmulShape& mm, int xi, int xj, int xk, int64_t seq, int64_t l2_bytes,
                   int64_t elem_bytes = 4);

/// Every (xi, xj, xk) with xi * xj * xk == p, xi <= max_i, xj <= max_j, xk <= max_k, in lexicographic order.
std::vector<Partition> factorisations(int p, int64_t max_i, int64_t max_j, int64_t max_k);

/// The partition of minimal traffic among factorisations(p, mm.i, max_j, allow_k ? mm.k : 1); ties go to
/// fewer batch blocks (larger Xj), then fewer K blocks. `max_j` caps Xj (the serving runtime splits J by
/// hidden units, so max_j = H). Throws corun::Error when p < 1 or nothing fits.
Partition choose_partition(const MatmulShape& mm, int p, int64_t seq, int64_t l2_bytes, int64_t max_j,
                           bool allow_k = false, int64_t elem_bytes = 4);

}  // namespace corun::serve
