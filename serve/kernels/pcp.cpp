#include "serve/kernels/pcp.hpp"

#include "base/check.hpp"

#include <limits>

namespace corun::serve {

double pcp_traffic(const MatmulShape& mm, int xi, int xj, int xk, int64_t seq, int64_t l2_bytes,
                   int64_t elem_bytes) {
  const double a = static_cast<double>(mm.i * mm.k * elem_bytes);
  const double b = static_cast<double>(mm.k * mm.j * elem_bytes);
  const double c = static_cast<double>(mm.i * mm.j * elem_bytes);
  const double s = static_cast<double>(seq);
  const bool fits = b / (static_cast<double>(xj) * xk) <= static_cast<double>(l2_bytes);
  if (fits) return s * (xj * a + 2.0 * xk * c) + xi * b;
  return s * (xj * a + xi * b + 2.0 * xk * c);
}

std::vector<Partition> factorisations(int p, int64_t max_i, int64_t max_j, int64_t max_k) {
  std::vector<Partition> out;
  for (int xi = 1; xi <= p; ++xi) {
    if (p % xi != 0 || xi > max_i) continue;
    for (int xj = 1; xj <= p / xi; ++xj) {
      if ((p / xi) % xj != 0 || xj > max_j) continue;
      const int xk = p / xi / xj;
      if (xk > max_k) continue;
      out.push_back(Partition{xi, xj, xk, 0.0, false});
    }
  }
  return out;
}

Partition choose_partition(const MatmulShape& mm, int p, int64_t seq, int64_t l2_bytes, int64_t max_j, bool allow_k,
                           int64_t elem_bytes) {
  CORUN_CHECK(p >= 1, Status::invalid_argument, "PCP: parallelism " << p << " must be at least 1");
  CORUN_CHECK(mm.i > 0 && mm.j > 0 && mm.k > 0, Status::invalid_argument,
              "PCP: MM extents must be positive (I=" << mm.i << " J=" << mm.j << " K=" << mm.k << ")");
  const std::vector<Partition> cands = factorisations(p, mm.i, max_j, allow_k ? mm.k : 1);
  CORUN_CHECK(!cands.empty(), Status::invalid_argument,
              "PCP: " << p << " blocks do not fit an MM of I=" << mm.i << " (batch) and " << max_j
                      << " column blocks; use fewer workers");
  Partition best;
  double best_traffic = std::numeric_limits<double>::infinity();
  for (Partition c : cands) {
    c.traffic_bytes = pcp_traffic(mm, c.xi, c.xj, c.xk, seq, l2_bytes, elem_bytes);
    c.weights_fit_l2 = static_cast<double>(mm.k * mm.j * elem_bytes) / (c.xj * c.xk) <= static_cast<double>(l2_bytes);
    const bool better = c.traffic_bytes < best_traffic ||
                        (c.traffic_bytes == best_traffic && (c.xi < best.xi || (c.xi == best.xi && c.xk < best.xk)));
    if (better) {
      best = c;
      best_traffic = c.traffic_bytes;
    }
  }
  return best;
}

}  // namespace corun::serve
