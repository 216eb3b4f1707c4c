#include "engine/planning.hpp"

#include "codelets/starpu/codelets.hpp"
#include "codelets/work_items.hpp"
#include "sched/widthmodel/interpolate.hpp"

#include <starpu.h>

#include <algorithm>
#include <cmath>

namespace corun::engine {

Planner::Planner(sched::ExecutorLayout layout, int max_width, int fixed_width)
    : choose_(layout, sched::ReadyOrder::level, true),
      max_width_(std::max(1, max_width)),
      fixed_width_(fixed_width),
      cores_(layout.count * layout.width) {}

void Planner::plan(const detail::GraphImpl& graph, const std::vector<starpu_task*>& tasks, GraphPlan& p,
                   const PredictionSource* extra) {
  const size_t n = graph.nodes.size();
  if (p.nodes == n && p.hints.size() == n && p.uncalibrated == 0 && !p.stale && ++p.runs_since_update < kRefreshRuns)
    return;
  p.runs_since_update = 0;
  p.stale = false;
  if (p.nodes != n) {
    p.deps = graphs::dependencies(graph);
    p.nodes = n;
  }
  const int W = max_width_;
  p.max_width = W;
  p.predicted.assign(n * static_cast<size_t>(W), NAN);
  p.calibrated.assign(n * static_cast<size_t>(W), NAN);
  p.hints.assign(n, sched::TaskHint{});
  models_.clear();  // the models learn during every run

  std::vector<double> chosen(n), fastest(n);
  double work = 0.0;
  p.uncalibrated = 0;
  p.cores = cores_;
  const auto& team_widths = choose_.team_widths();
  for (size_t i = 0; i < n; ++i) {
    const auto& call = graph.nodes[i].call;
    // Never wider than the call's work items: a member past them would sit idle (codelets/work_items.hpp).
    const int wmax = std::min(W, codelets::useful_width(call, codelets::op_info(call.kind).max_width));
    const std::vector<double>& t = models_.predict(tasks[i], codelets::footprint(call), wmax);
    double* row = &p.predicted[i * static_cast<size_t>(W)];
    std::copy(t.begin(), t.end(), row);
    const std::vector<double>& measured = models_.calibrated(tasks[i], codelets::footprint(call), wmax);
    std::copy(measured.begin(), measured.end(), &p.calibrated[i * static_cast<size_t>(W)]);
    if (extra != nullptr) extra->fill(i, row, wmax);
    const std::vector<double> known(row, row + wmax);

    sched::TaskHint& h = p.hints[i];
    h.node = static_cast<int32_t>(i);
    h.max_width = wmax;
    h.fixed_width = fixed_width_ > 0 ? std::min(fixed_width_, wmax) : 0;  // calibration: clamped like max_width
    h.predicted_us = row;
    h.npredicted = wmax;

    // The time the policy will see: its own width choice, else the nearest measured width; a node
    // nothing is known about counts as 1 µs, so levels still order by depth on a first run.
    sched::PlannerTask pt;
    pt.max_width = wmax;
    pt.fixed_width = h.fixed_width;
    pt.predicted.assign(team_widths.size(), NAN);
    for (size_t k = 0; k < team_widths.size(); ++k)
      if (team_widths[k] <= wmax) pt.predicted[k] = known[static_cast<size_t>(team_widths[k] - 1)];
    double at = NAN;
    const int w = choose_.choose_width(pt, &at);
    if (std::isnan(at)) at = sched::nearest_measured(known, w);
    chosen[i] = std::isnan(at) ? 1.0 : at;

    double best = NAN, least = NAN;
    for (int k = 0; k < wmax; ++k) {
      const double tk = known[static_cast<size_t>(k)];
      if (std::isnan(tk)) continue;
      best = std::isnan(best) ? tk : std::min(best, tk);
      const double core_time = tk * (k + 1);
      least = std::isnan(least) ? core_time : std::min(least, core_time);
    }
    if (std::isnan(best)) ++p.uncalibrated;
    fastest[i] = best;
    work += least;
  }
  p.levels = graphs::levels(p.deps, chosen);
  for (size_t i = 0; i < n; ++i) p.hints[i].level_us = p.levels.level[i];

  if (p.uncalibrated == 0 && n > 0) {
    p.critical_path_us = graphs::levels(p.deps, fastest).critical_path;
    p.total_work_us = work;
    p.lower_bound_us = std::max(p.critical_path_us, work / std::max(1, cores_));
  } else {
    p.critical_path_us = p.total_work_us = p.lower_bound_us = NAN;
  }
}

std::vector<sched::TunerNode> tuner_nodes(const detail::GraphImpl& graph) {
  std::vector<sched::TunerNode> out;
  out.reserve(graph.nodes.size());
  for (const auto& node : graph.nodes)
    out.push_back({static_cast<int>(node.call.kind), codelets::footprint(node.call),
                   codelets::useful_width(node.call, codelets::op_info(node.call.kind).max_width)});
  return out;
}

}  // namespace corun::engine
