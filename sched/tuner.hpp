// sched/tuner.hpp — a policy's engine-side phase, behind one interface the engine calls for every policy.
//
// Some policies learn about a graph across its runs before (or while) they schedule it: the corun policy
// searches each op's width in its first runs and may freeze one schedule (sched/corun/corun_tuning.hpp).
// The engine knows none of that. For a policy whose registry row has `make_tuner`, it makes one PlanTuner
// per bound graph and, at every run: plans the hints, lets the tuner `apply` its own fields to them, asks
// whether the run is a `tuning` run (then every task is measured), and hands the measured tasks back to
// `record`. A tuner also fills the predictions StarPU's history models lack (PredictionSource).
//
// Plain C++ (no StarPU, no Graph): the engine describes the graph as one TunerNode per node in node order
// (a topological order) and the dependencies as successor lists.
#pragma once

#include "sched/hint.hpp"

#include <corun/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace corun::sched {

/// Predictions from elsewhere than StarPU's history models (a width search measures its own).
class PredictionSource {
 public:
  virtual ~PredictionSource() = default;
  /// May replace NaN entries of node `node`'s row (widths 1..max_width, µs).
  virtual void fill(size_t node, double* row, int max_width) const = 0;
};

/// One graph node as a tuner sees it.
struct TunerNode {
  int kind = 0;            ///< op kind (an index below TunerSettings::op_kinds)
  uint32_t footprint = 0;  ///< the history models' key of its shapes: equal footprints, equal work
  int max_width = 1;       ///< the widest team its op can use
};

/// The settings of the policy's engine-side phase (corun::Config's, resolved by the engine).
struct TunerSettings {
  int cores = 1;                 ///< the policy's cores
  int width_interval = 1;        ///< the climb's width step (>= 1)
  int fixed_width = 0;           ///< > 0: every op at that width, no search (calibration)
  bool deterministic = false;    ///< freeze one schedule once tuned
  std::string schedule_file;     ///< where a frozen schedule is kept ("" = nowhere)
  bool models_are_measurements = false;  ///< simulated runs: a task takes exactly its model's time
  int op_kinds = 0;              ///< the number of op kinds (TunerNode::kind < op_kinds)
  /// Where measured width climbs are remembered across processes ("" = nowhere; sched/corun/climb_memory.hpp).
  std::string climb_memory_file;
  uint64_t op_kinds_tag = 0;     ///< identifies the list of op kinds the TunerNode::kind numbers index
};

/// The engine's plan of one run, as a tuner may change it.
struct TunerPlan {
  std::vector<TaskHint>& hints;                          ///< one per node, filled by the engine's planner
  const std::vector<std::vector<int32_t>>& successors;   ///< per node, in node order
  int uncalibrated = 0;                                  ///< nodes without any prediction
  bool stale = false;  ///< set by apply(): the predictions changed, the engine replans at the next run
  /// Node i's time at width w is calibrated[i * calibrated_stride + w - 1] when StarPU's history entry of
  /// that width has enough samples (STARPU_CALIBRATE_MINIMUM), else NaN: measurements of earlier runs or of
  /// `corun profile`, never interpolated nor filled by a PredictionSource. nullptr: none known.
  const double* calibrated = nullptr;
  int calibrated_stride = 0;
};

class PlanTuner : public PredictionSource {
 public:
  /// True while the next run is a tuning run (every task is measured and handed to record()).
  virtual bool tuning() const = 0;
  /// True once the tuner placed every task itself (a frozen schedule).
  virtual bool frozen() const = 0;
  /// Sets this run's hint fields that are the tuner's (fixed blocks, stable widths, kinds).
  virtual void apply(TunerPlan& plan) = 0;
  /// After a tuning run, its tasks in node order. Returns true when the predictions changed (replan).
  virtual bool record(const std::vector<TraceTask>& trace) = 0;
};

/// A registry row's factory: one tuner per bound graph.
using MakeTuner = std::unique_ptr<PlanTuner> (*)(const std::vector<TunerNode>& nodes, const TunerSettings& settings);
/// A registry row's check of its settings' files before StarPU starts (throws corun::Error).
using CheckTunerSettings = void (*)(const TunerSettings& settings);

/// The longest path through a DAG in node order (every successor after its node), each node taking `time`.
double critical_path(const std::vector<std::vector<int32_t>>& successors, const std::vector<double>& time);

}  // namespace corun::sched
