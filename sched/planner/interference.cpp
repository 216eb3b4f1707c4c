#include "sched/planner/interference.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace corun::sched {

InterferenceDetector::InterferenceDetector(double slowdown, int min_events, double min_share, int baseline_window)
    : slowdown_(slowdown),
      min_events_(min_events),
      min_share_(min_share),
      baseline_window_(static_cast<size_t>(std::max(0, baseline_window))) {
  CORUN_CHECK(baseline_window >= 0, Status::invalid_argument,
              "interference detector: baseline_window " << baseline_window << " (0: off, else observations)");
  CORUN_CHECK(min_share >= 0.0 && min_share <= 1.0, Status::invalid_argument,
              "interference detector: min_share " << min_share << " (a fraction in [0, 1])");
  CORUN_CHECK(std::isfinite(slowdown) && slowdown >= 1.0, Status::invalid_argument,
              "interference detector: slowdown " << slowdown << " (a factor >= 1 over the prediction)");
  CORUN_CHECK(min_events >= 1, Status::invalid_argument, "interference detector: min_events " << min_events << " < 1");
}

void InterferenceDetector::observe(const CorunObservation& o) {
  // `!(x > 0)` also rejects NaN.
  if (o.kind < 0 || !(o.predicted > 0.0) || std::isnan(o.measured)) return;
  // Until half the window is filled the machine's slowdown is not known: no verdict yet.
  const bool judged = ratios_.size() >= baseline_window_ / 2;
  const bool slowed = o.measured >= slowdown_ * baseline() * o.predicted;
  if (baseline_window_ > 0) {  // after the verdict: an op is not compared with itself
    ratios_.push_back(o.measured / o.predicted);
    if (ratios_.size() > baseline_window_) ratios_.pop_front();
  }
  if (!judged) return;
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

double InterferenceDetector::baseline() const {
  if (ratios_.empty()) return 1.0;
  std::vector<double> r(ratios_.begin(), ratios_.end());
  auto mid = r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2);
  std::nth_element(r.begin(), mid, r.end());
  return std::max(1.0, *mid);
}

std::vector<std::pair<int, int>> InterferenceDetector::pairs() const {
  std::vector<std::pair<int, int>> out;  // std::map iterates in key order: sorted, deterministic
  for (const auto& [pair, c] : counts_)
    if (c.events >= min_events_ && c.events >= min_share_ * c.observations) out.push_back(pair);
  return out;
}

}  // namespace corun::sched
