#include "sched/planner/width_search.hpp"

#include "base/check.hpp"
#include "sched/widthmodel/interpolate.hpp"

#include <algorithm>
#include <cmath>

namespace corun::sched {

WidthSearch::WidthSearch(int max_width, int interval) : max_width_(max_width), interval_(interval) {
  CORUN_CHECK(max_width >= 1, Status::invalid_argument, "width search: max width " << max_width << " < 1");
  CORUN_CHECK(interval >= 1, Status::invalid_argument, "width search: interval " << interval << " < 1");
  measured_.assign(static_cast<size_t>(max_width), NAN);
}

void WidthSearch::record(int width, double time) {
  CORUN_CHECK(!done(), Status::invalid_argument, "width search: record(" << width << ") after the climb stopped");
  CORUN_CHECK(width == next_, Status::invalid_argument,
              "width search: recorded width " << width << " but width " << next_ << " was proposed");
  CORUN_CHECK(time >= 0.0, Status::invalid_argument, "width search: time " << time << " at width " << width);
  measured_[static_cast<size_t>(width - 1)] = time;
  const bool rose = best_width_ > 0 && time > last_time_;
  if (best_width_ == 0 || time < best_time_) best_width_ = width, best_time_ = time;
  last_time_ = time;
  if (rose || width == max_width_) {
    next_ = 0;
    return;
  }
  // Clamp the last step so the full machine is measured even when max_width - 1 is not a multiple of x.
  next_ = std::min(width + interval_, max_width_);
}

void WidthSearch::stop() {
  CORUN_CHECK(!done(), Status::invalid_argument, "width search: stop() after the climb stopped");
  CORUN_CHECK(best_width_ > 0, Status::invalid_argument,
              "width search: stop() before any width was measured (width " << next_ << " is the first)");
  next_ = 0;
}

std::vector<double> WidthSearch::curve() const {
  std::vector<double> t = measured_;
  interpolate_widths(t);
  return t;
}

std::vector<std::pair<int, double>> WidthSearch::measured() const {
  std::vector<std::pair<int, double>> points;
  // The climb only ever rises in width, so ascending width is the order the times were recorded in.
  for (size_t i = 0; i < measured_.size(); ++i)
    if (!std::isnan(measured_[i])) points.emplace_back(static_cast<int>(i) + 1, measured_[i]);
  return points;
}

std::vector<int> climb_widths(int max_width, int interval) {
  std::vector<int> widths;
  // Strictly falling times: the climb never stops early, so it proposes every width it ever could.
  for (WidthSearch s(max_width, interval); !s.done(); s.record(s.next(), 1.0 / s.next())) widths.push_back(s.next());
  return widths;
}

int stable_width_for_kind(const std::vector<KindInstance>& instances) {
  CORUN_CHECK(!instances.empty(), Status::invalid_argument, "stable width: no instances");
  const KindInstance* largest = &instances.front();
  for (const KindInstance& i : instances)
    if (i.size > largest->size) largest = &i;
  CORUN_CHECK(largest->best_width >= 1, Status::invalid_argument,
              "stable width: largest instance has no best width (" << largest->best_width << ")");
  return largest->best_width;
}

}  // namespace corun::sched

namespace corun::sched {

int parallelism_width_cap(double work_us, double critical_path_us, int cores) {
  CORUN_CHECK(cores >= 1, Status::invalid_argument, "parallelism width cap: " << cores << " cores");
  if (!(work_us > 0.0) || !(critical_path_us > 0.0)) return cores;
  const double parallelism = std::max(1.0, work_us / critical_path_us);
  return std::clamp(static_cast<int>(std::ceil(cores / parallelism)), 1, cores);
}

}  // namespace corun::sched
