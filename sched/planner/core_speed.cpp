#include "sched/planner/core_speed.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>

namespace corun::sched {

CoreSpeed::CoreSpeed(int cores) {
  CORUN_CHECK(cores >= 1, Status::invalid_argument, "core speed: " << cores << " cores (>= 1)");
  ratios_.resize(static_cast<size_t>(cores));
}

void CoreSpeed::observe(int core, double predicted, double measured) {
  if (core < 0 || core >= static_cast<int>(ratios_.size())) return;
  // `!(x > 0)` also rejects NaN.
  if (!(predicted > 0.0) || !(measured > 0.0) || !std::isfinite(predicted) || !std::isfinite(measured)) return;
  std::deque<double>& r = ratios_[static_cast<size_t>(core)];
  r.push_back(measured / predicted);
  if (r.size() > static_cast<size_t>(kWindow)) r.pop_front();
}

double CoreSpeed::median_of(int core) const {
  const std::deque<double>& d = ratios_[static_cast<size_t>(core)];
  if (d.size() < static_cast<size_t>(kMinSamples)) return NAN;
  std::vector<double> r(d.begin(), d.end());
  auto mid = r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2);
  std::nth_element(r.begin(), mid, r.end());
  return *mid;
}

std::vector<double> CoreSpeed::slowdowns() const {
  const int n = static_cast<int>(ratios_.size());
  std::vector<double> med(static_cast<size_t>(n));
  double fastest = INFINITY;
  int measured = 0;
  for (int c = 0; c < n; ++c) {
    med[static_cast<size_t>(c)] = median_of(c);
    if (!std::isnan(med[static_cast<size_t>(c)])) {
      fastest = std::min(fastest, med[static_cast<size_t>(c)]);
      ++measured;
    }
  }
  std::vector<double> out(static_cast<size_t>(n), 1.0);
  if (measured < 2 || !(fastest > 0.0)) return out;  // nothing to compare with
  for (int c = 0; c < n; ++c) {
    const double s = med[static_cast<size_t>(c)] / fastest;
    if (s >= kBusyFactor) out[static_cast<size_t>(c)] = s;  // NaN (unmeasured) compares false: 1
  }
  return out;
}

double CoreSpeed::slowdown(int core) const {
  CORUN_CHECK(core >= 0 && core < static_cast<int>(ratios_.size()), Status::invalid_argument,
              "core speed: core " << core << " of " << ratios_.size());
  return slowdowns()[static_cast<size_t>(core)];
}

}  // namespace corun::sched
