#include "sched/widthmodel/interpolate.hpp"

#include <cmath>
#include <cstdlib>

namespace corun::sched {

void interpolate_widths(std::vector<double>& t) {
  int prev = -1;  // index of the last measured width
  for (int i = 0; i < static_cast<int>(t.size()); ++i) {
    if (std::isnan(t[static_cast<size_t>(i)])) continue;
    if (prev >= 0 && i - prev > 1) {
      const double a = t[static_cast<size_t>(prev)], b = t[static_cast<size_t>(i)];
      for (int j = prev + 1; j < i; ++j) t[static_cast<size_t>(j)] = a + (b - a) * (j - prev) / (i - prev);
    }
    prev = i;
  }
}

double nearest_measured(const std::vector<double>& t, int width) {
  double best = NAN;
  int best_dist = 0;
  for (int i = 0; i < static_cast<int>(t.size()); ++i) {
    if (std::isnan(t[static_cast<size_t>(i)])) continue;
    const int dist = std::abs(i + 1 - width);
    if (std::isnan(best) || dist < best_dist) best = t[static_cast<size_t>(i)], best_dist = dist;
  }
  return best;
}

}  // namespace corun::sched
