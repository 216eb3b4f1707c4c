#include "sched/planner/interference.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace corun::sched {

InterferenceDetector::InterferenceDetector(double slowdown, int min_events, double min_share)
    : slowdown_(slowdown), min_events_(min_events), min_share_(min_share) {
  CORUN_CHECK(min_share >= 0.0 && min_share <= 1.0, Status::invalid_argument,
              "interference detector: min_share " << min_share << " (a fraction in [0, 1])");
  CORUN_CHECK(std::isfinite(slowdown) && slowdown >= 1.0, Status::invalid_argument,
              "interference detector: slowdown " << slowdown << " (a factor >= 1 over the prediction)");
  CORUN_CHECK(min_events >= 1, Status::invalid_argument, "interference detector: min_events " << min_events << " < 1");
}

void InterferenceDetector::observe(const CorunObservation& o) {
  // `!(x > 0)` also rejects NaN.
  if (o.kind < 0 || !(o.predicted > 0.0) || std::isnan(o.measured)) return;
  const bool slowed = o.measured >= slowdown_ * o.predicted;
  // One event per distinct co-running kind: two instances of one kind beside the op are one cause.
  std::set<int> others;
  for (int k : o.corunning_kinds)
    if (k >= 0) others.insert(k);
  for (int k : others) {
    Count& c = counts_[std::minmax(o.kind, k)];
    ++c.observations;
    c.events += slowed;
  }
}

std::vector<std::pair<int, int>> InterferenceDetector::pairs() const {
  std::vector<std::pair<int, int>> out;  // std::map iterates in key order: sorted, deterministic
  for (const auto& [pair, c] : counts_)
    if (c.events >= min_events_ && c.events >= min_share_ * c.observations) out.push_back(pair);
  return out;
}

}  // namespace corun::sched
