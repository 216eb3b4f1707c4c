// The latency summaries of `corun infer` (built-in models and wide-deep's benchmark path).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace corun::cli {

/// The q-quantile (0..1) of sorted, non-empty samples, nearest rank.
inline double quantile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  const size_t rank = static_cast<size_t>(std::max(1.0, std::ceil(q * static_cast<double>(n))));
  return sorted[std::min(n, rank) - 1];
}

}  // namespace corun::cli
