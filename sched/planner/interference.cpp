#include "sched/planner/interference.hpp"

#include "core/base/check.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace corun::sched {

InterferenceDetector::InterferenceDetector(double slowdown, int min_events)
    : slowdown_(slowdown), min_events_(min_events) {
  CORUN_CHECK(std::isfinite(slowdown) && slowdown >= 1.0, Status::invalid_argument,
              "interference detector: slowdown " << slowdown << " (a factor >= 1 over the prediction)");
  CORUN_CHECK(min_events >= 1, Status::invalid_argument, "interference detector: min_events " << min_events << " < 1");
}

void InterferenceDetector::observe(const CorunObservation& o) {
  // `!(x > 0)` also rejects NaN; a NaN measurement fails the comparison below.
  if (o.kind < 0 || !(o.predicted > 0.0) || !(o.measured >= slowdown_ * o.predicted)) return;
  // One event per distinct co-running kind: two instances of one kind beside the op are one cause.
  std::set<int> others;
  for (int k : o.corunning_kinds)
    if (k >= 0) others.insert(k);
  for (int k : others) ++events_[std::minmax(o.kind, k)];
}

std::vector<std::pair<int, int>> InterferenceDetector::pairs() const {
  std::vector<std::pair<int, int>> out;  // std::map iterates in key order: sorted, deterministic
  for (const auto& [pair, count] : events_)
    if (count >= min_events_) out.push_back(pair);
  return out;
}

}  // namespace corun::sched
