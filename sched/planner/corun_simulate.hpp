// sched/planner/corun_simulate.hpp — replays CorunPlanner over a whole graph with predicted times only:
// the static schedule of deterministic mode (fixed placements decided before the run) and the co-run
// counts of the paper's Figure 4 without a machine.
//
// simulate_corun is event-driven list scheduling that makes the same calls the StarPU adapter makes: at
// time 0 the nodes without predecessors are ready and dispatched; then the earliest predicted end (NaN
// predictions count as 0; ties: lowest node index) finishes, the successors whose predecessors are all
// done become ready (in successor-list order) and the planner dispatches again: one completion per
// dispatch, as completions arrive one at a time at run time. Node i is planner task id i (task.id is
// ignored). Deterministic: the same input gives the same output.
#pragma once

#include "sched/planner/corun_planner.hpp"

#include <string>
#include <utility>
#include <vector>

namespace corun::sched {

struct SimNode {
  CorunTask task;               ///< task.id is ignored; the node index is used
  std::vector<int> successors;  ///< node indices (listing one twice makes it two dependencies)
};

struct SimPlacement {
  int first_core = -1;
  int width = 0;
  int thread = 0;
  double start = 0, end = 0;
  std::string reason;  ///< the planner's reason
};

struct SimResult {
  std::vector<SimPlacement> placements;  ///< per node
  double makespan = 0;                   ///< latest end (0 for no nodes)
};

/// Throws corun::Error for a bad successor index, a cycle, a task the planner rejects, or a deadlock
/// (nothing runs and the ready tasks never start).
SimResult simulate_corun(const std::vector<SimNode>& nodes, int cores, int threads_per_core = 1);

/// Number of `intervals` (start, end) active over time as a step function: (time, count from that time
/// on), one entry per distinct start or end, sorted; the last entry is (latest end, 0). An interval is
/// active on [start, end): one that ends where another starts is not counted twice. Throws corun::Error
/// for a non-finite bound or end < start.
std::vector<std::pair<double, int>> concurrency_profile(const std::vector<std::pair<double, double>>& intervals);

/// Time-weighted mean of concurrency_profile over [earliest start, latest end] (the paper's "average number
/// of co-running operations" without sampling bias towards busy moments); 0 when that span is empty.
double mean_concurrency(const std::vector<std::pair<double, double>>& intervals);

}  // namespace corun::sched
