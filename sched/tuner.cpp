#include "sched/tuner.hpp"

#include <algorithm>

namespace corun::sched {

double critical_path(const std::vector<std::vector<int32_t>>& successors, const std::vector<double>& time) {
  // Node order is topological, so one backward sweep sees every successor's level before its node's.
  std::vector<double> level(time.size(), 0.0);
  double longest = 0.0;
  for (size_t i = time.size(); i-- > 0;) {
    double after = 0.0;
    if (i < successors.size())
      for (int32_t s : successors[i]) after = std::max(after, level[static_cast<size_t>(s)]);
    level[i] = time[i] + after;
    longest = std::max(longest, level[i]);
  }
  return longest;
}

}  // namespace corun::sched
