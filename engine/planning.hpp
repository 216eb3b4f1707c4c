// engine/planning.hpp — what the engine computes before submitting a run for corun's policies:
// per-node per-width predictions, critical-path levels (the TaskHint of every task) and the run's
// lower bound max(critical path, total work / cores) from the same models.
#pragma once

#include "engine/width_models.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/passes/levels.hpp"
#include "sched/hint.hpp"
#include "sched/planner/cpf_planner.hpp"
#include "sched/tuner.hpp"

#include <memory>
#include <vector>

struct starpu_task;

namespace corun::engine {

/// Per bound graph: the dependency DAG (rebuilt when nodes are added) and the hints of the last run.
struct GraphPlan {
  size_t nodes = 0;                  ///< node count `deps` was derived for
  graphs::Dependencies deps;
  int max_width = 1;                 ///< widths 1..max_width are predicted
  std::vector<double> predicted;     ///< node * max_width + (w - 1), µs (NaN unknown)
  std::vector<double> calibrated;    ///< the same, history entries with enough samples only (no interpolation, no fill)
  std::vector<sched::TaskHint> hints;
  graphs::Levels levels;             ///< levels at the widths the planner will choose
  int uncalibrated = 0;              ///< nodes without any prediction
  double critical_path_us = NAN;     ///< at each node's fastest width (NaN when a node is uncalibrated)
  double total_work_us = NAN;        ///< sum of each node's least core-time (width x time)
  double lower_bound_us = NAN;       ///< max(critical_path_us, total_work_us / cores)
  int cores = 0;                     ///< the cores of the executors
  int runs_since_update = 0;         ///< runs that reused this plan
  bool stale = false;                ///< the next plan() recomputes it (the PredictionSource learnt something)
};

/// Predictions from elsewhere than StarPU's history models (a policy's width search measures its own).
using PredictionSource = sched::PredictionSource;

/// The graph as a policy's engine-side phase sees it (sched/tuner.hpp): op kind, footprint, widest team.
std::vector<sched::TunerNode> tuner_nodes(const detail::GraphImpl& graph);

class Planner {
 public:
  /// `layout`: the executors of the running policy of ours (for built-ins: workers x 1 with
  /// `max_width` = workers); `fixed_width` > 0 asks every task to run at that width (calibration).
  Planner(sched::ExecutorLayout layout, int max_width, int fixed_width);

  /// Fills `plan` for the tasks of this run (one per node, created but not submitted yet), or keeps the
  /// previous plan of the same graph: querying every node's models costs ~0.7 ms per 1000 nodes, time the
  /// workers would sit idle at the start of every run. A plan is recomputed while any node is
  /// uncalibrated, when the graph changed, when marked stale, and every kRefreshRuns runs (the models keep
  /// learning).
  /// `extra` fills what the models do not know yet.
  void plan(const detail::GraphImpl& graph, const std::vector<starpu_task*>& tasks, GraphPlan& plan,
            const PredictionSource* extra = nullptr);
  static constexpr int kRefreshRuns = 16;

 private:
  sched::CpfPlanner choose_;  // only its choose_width(): levels use the width the policy will pick
  int max_width_;
  int fixed_width_;
  int cores_;
  WidthModels models_;
};

}  // namespace corun::engine
