// The grouping decision of the plan step (the cost model in pass_gain.hpp).
#include "engine/pass_gain.hpp"

#include "codelets/group/group.hpp"
#include "sched/widthmodel/interpolate.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

namespace corun::engine {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Member i at width w: its prediction at min(w, its max width), NaN when unknown.
double at_width(const std::vector<double>& t, int w) {
  if (t.empty()) return NAN;
  return t[static_cast<size_t>(std::min(w, static_cast<int>(t.size())) - 1)];
}

// Longest-processing-time list scheduling of `jobs` over `teams` teams: the makespan.
double list_schedule(std::vector<double> jobs, int teams) {
  std::sort(jobs.begin(), jobs.end(), std::greater<>());
  std::vector<double> load(static_cast<size_t>(std::max(1, teams)), 0.0);
  for (double j : jobs) *std::min_element(load.begin(), load.end()) += j;
  return *std::max_element(load.begin(), load.end());
}

}  // namespace

GroupDecision decide_group(const std::vector<std::vector<double>>& times, const TeamShape& shape,
                           double task_overhead_us, bool when_unknown) {
  GroupDecision d;
  const int m = static_cast<int>(times.size());
  std::vector<std::vector<double>> t = times;
  for (auto& row : t) sched::interpolate_widths(row);
  d.known = m > 0 && std::all_of(t.begin(), t.end(), [](const std::vector<double>& r) { return !std::isnan(at_width(r, 1)); });
  if (!d.known) {
    d.apply = when_unknown;
    d.reason = std::string("no width-1 prediction for every member: the default, ") + (when_unknown ? "grouped" : "not grouped");
    return d;
  }
  d.separate_us = d.grouped_us = kInf;
  std::vector<double> width1;
  for (const auto& row : t) width1.push_back(at_width(row, 1));
  for (int w : shape.widths) {
    if (w < 1 || w > shape.cores) continue;
    // Separate tasks at width w: skipped when a member has no prediction there.
    std::vector<double> jobs;
    for (const auto& row : t) jobs.push_back(at_width(row, w) + task_overhead_us);
    if (std::none_of(jobs.begin(), jobs.end(), [](double j) { return std::isnan(j); })) {
      const double s = list_schedule(jobs, shape.cores / w);
      if (s < d.separate_us) d.separate_us = s, d.separate_width = w;
    }
    // One group task at width w: its members at width 1, team member r running split_range(m, r, w).
    if (w > m) continue;
    const double slowest = codelets::group_time_us(width1, w);
    if (slowest + task_overhead_us < d.grouped_us) d.grouped_us = slowest + task_overhead_us, d.grouped_width = w;
  }
  std::ostringstream why;
  if (d.separate_us == kInf || d.grouped_us == kInf) {
    // The policy's widths have no prediction for the members as separate tasks (or no usable width).
    d.known = false;
    d.apply = when_unknown;
    why << "no prediction at the policy's team widths: the default, " << (when_unknown ? "grouped" : "not grouped");
    d.reason = why.str();
    return d;
  }
  d.apply = d.grouped_us < d.separate_us * (1.0 - kMinGain);
  why.precision(1);
  why << std::fixed << (d.apply ? "grouped" : "not grouped") << ": " << m << " members predicted " << d.grouped_us
      << " us as one task at width " << d.grouped_width << " vs " << d.separate_us << " us as separate tasks at width "
      << d.separate_width << " on " << shape.cores << " core(s)"
      << (d.apply ? "" : " (a group must gain 5%)");
  d.reason = why.str();
  return d;
}

}  // namespace corun::engine
