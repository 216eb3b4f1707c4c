#include "sched/planner/corun_simulate.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace corun::sched {

namespace {

// Predecessor counts; throws for a bad index or a cycle (Kahn's algorithm must reach every node).
std::vector<int> predecessor_counts(const std::vector<SimNode>& nodes) {
  const int n = static_cast<int>(nodes.size());
  std::vector<int> preds(nodes.size(), 0);
  for (int i = 0; i < n; ++i)
    for (int s : nodes[static_cast<size_t>(i)].successors) {
      CORUN_CHECK(s >= 0 && s < n, Status::invalid_argument,
                  "corun simulation: node " << i << " has successor " << s << " outside 0.." << n - 1);
      ++preds[static_cast<size_t>(s)];
    }
  std::vector<int> left = preds, stack;
  for (int i = 0; i < n; ++i)
    if (left[static_cast<size_t>(i)] == 0) stack.push_back(i);
  int reached = 0;
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    ++reached;
    for (int s : nodes[static_cast<size_t>(i)].successors)
      if (--left[static_cast<size_t>(s)] == 0) stack.push_back(s);
  }
  CORUN_CHECK(reached == n, Status::invalid_argument,
              "corun simulation: the graph has a cycle (" << n - reached << " of " << n << " nodes on or after it)");
  return preds;
}

}  // namespace

SimResult simulate_corun(const std::vector<SimNode>& nodes, int cores, int threads_per_core) {
  std::vector<int> preds = predecessor_counts(nodes);
  CorunPlanner planner(cores, threads_per_core);
  SimResult result;
  result.placements.resize(nodes.size());
  auto make_ready = [&](int i) {
    CorunTask t = nodes[static_cast<size_t>(i)].task;
    t.id = static_cast<uint64_t>(i);
    planner.add_ready(std::move(t));
  };
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i)
    if (preds[static_cast<size_t>(i)] == 0) make_ready(i);

  std::set<std::pair<double, int>> running;  // (end, node): earliest end first, ties lowest node
  double now = 0.0;
  size_t done = 0;
  std::vector<CorunAssignment> placed;
  while (done < nodes.size()) {
    placed.clear();
    planner.dispatch(now, placed);
    for (const CorunAssignment& a : placed) {
      SimPlacement& p = result.placements[a.id];
      p.first_core = a.first_core;
      p.width = a.width;
      p.thread = a.thread;
      p.start = now;
      p.end = now + (std::isnan(a.predicted) ? 0.0 : a.predicted);
      p.reason = a.reason;
      running.emplace(p.end, static_cast<int>(a.id));
    }
    CORUN_CHECK(!running.empty(), Status::invalid_argument,
                "corun simulation: deadlock at time " << now << ": nothing runs and " << planner.ready_count()
                                                      << " ready tasks do not start on " << cores << " cores");
    const auto [end, node] = *running.begin();
    running.erase(running.begin());
    now = end;
    planner.finished(static_cast<uint64_t>(node));
    ++done;
    result.makespan = std::max(result.makespan, end);
    for (int s : nodes[static_cast<size_t>(node)].successors)
      if (--preds[static_cast<size_t>(s)] == 0) make_ready(s);
  }
  return result;
}

std::vector<std::pair<double, int>> concurrency_profile(const std::vector<std::pair<double, double>>& intervals) {
  std::map<double, int> delta;  // time -> change in the count; the map merges equal times and sorts
  for (const auto& [start, end] : intervals) {
    CORUN_CHECK(std::isfinite(start) && std::isfinite(end) && end >= start, Status::invalid_argument,
                "concurrency profile: interval [" << start << ", " << end << ") (finite bounds, end >= start)");
    ++delta[start];
    --delta[end];
  }
  std::vector<std::pair<double, int>> out;
  int active = 0;
  for (const auto& [t, d] : delta) out.emplace_back(t, active += d);
  return out;
}

double mean_concurrency(const std::vector<std::pair<double, double>>& intervals) {
  const auto profile = concurrency_profile(intervals);
  if (profile.size() < 2) return 0.0;
  const double span = profile.back().first - profile.front().first;
  if (!(span > 0.0)) return 0.0;
  double area = 0.0;  // integral of the step function
  for (size_t i = 0; i + 1 < profile.size(); ++i)
    area += profile[i].second * (profile[i + 1].first - profile[i].first);
  return area / span;
}

}  // namespace corun::sched
