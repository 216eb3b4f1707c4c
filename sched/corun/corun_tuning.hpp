// sched/corun/corun_tuning.hpp — the corun policy's engine-side phase (a sched::PlanTuner, sched/tuner.hpp):
// Strategies 1-2 of the co-run paper (per-op width by hill climbing in the first runs, one stable width
// per op kind) and deterministic mode (a frozen schedule).
//
// Width search. Nodes with the same (op, footprint) are one "signature"; each has a sched::WidthSearch.
// While any search runs, every task of the graph is pinned to the core block [0, w) (w: its signature's
// width under test), which serialises the run: each op is measured alone, as the paper's profiling steps
// do. After a tuning run the median kernel time of each signature's nodes is recorded at that width. Once
// all searches stop, an op kind's stable width is the best width of its largest signature (by time at
// width 1), and the measured curves fill the predictions StarPU's history models do not have yet.
//
// Warm-up. The first tuning run of a graph measures nothing: it runs every task on [0, max width) of its
// signature, so that every core the climb will use has run every op of the graph once before it is timed.
// A kernel's first call on a thread pays for what it makes once (oneDNN creates and JITs its primitives per
// thread and shape, OpenBLAS its buffers, first-touch page faults): timed, ResNet-18's convolutions at batch
// 32 took 1.5-2.5x their steady time at width 2, the climb kept width 1 and inference ran 1.7x slower.
//
// A climb is not measured when the models already say what it would measure: it is replayed over them as
// soon as they hold every width it visits (the same widths, the same stop at the first rise). On real
// kernels only StarPU's calibrated history entries count (TunerPlan::calibrated: at least
// STARPU_CALIBRATE_MINIMUM samples at that very width), which `corun profile` leaves under STARPU_HOME, and
// the climbs earlier processes measured (TunerSettings::climb_memory_file, sched/corun/climb_memory.hpp):
// such a process runs no tuning run at all. Every climb that ends is remembered, replayed ones too (StarPU
// may flush a history entry later), except one the co-tenancy governor cut short. Under simulation
// (`corun simulate`, `models_are_measurements`) a measurement is the model itself (a task at width w sleeps
// for its width-w model), so any prediction counts (at 64 simulated cores the climbs took 16 runs and made
// the first tables show tuning runs).
//
// Deterministic mode. Once the search is over and every node has a prediction, the graph's schedule is
// computed once by simulating the corun planner on the predictions (sched::simulate_corun) and every
// later run pins each node to its simulated block. With CORUN_SCHEDULE=FILE the frozen schedule is read
// from that file when it matches the graph, else written there, so separate processes share it.
#pragma once

#include "sched/corun/climb_memory.hpp"
#include "sched/planner/width_search.hpp"
#include "sched/tuner.hpp"

#include <corun/trace.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace corun::sched {

class CorunTuning final : public PlanTuner {
 public:
  /// `settings.width_interval` >= 1: the climb's width step; `settings.fixed_width` > 0 (CORUN_FIXED_WIDTH):
  /// every op at that width, no search; `models_are_measurements`: replay the climbs over the predictions
  /// (simulated runs, see above).
  CorunTuning(const std::vector<TunerNode>& nodes, const TunerSettings& settings);

  /// The registry row's factory and file check (sched/registry.cpp).
  static std::unique_ptr<PlanTuner> make(const std::vector<TunerNode>& nodes, const TunerSettings& settings);
  /// Throws corun::Error when CORUN_SCHEDULE names a file that is not a schedule (before StarPU starts).
  static void check_settings(const TunerSettings& settings);

  /// True while some signature's width is still being searched (the next run is a tuning run).
  bool tuning() const override;
  bool frozen() const override { return !frozen_first_.empty(); }
  /// Sets this run's hint fields (fixed blocks, stable widths, kinds); freezes the schedule when due.
  void apply(TunerPlan& plan) override;
  /// After a tuning run: records every signature's median time at the width it ran at (nothing after the
  /// warm-up run).
  /// Returns true when a climb ended with it: its curve now fills predictions, so the plan is stale.
  bool record(const std::vector<TraceTask>& trace) override;

  void fill(size_t node, double* row, int max_width) const override;

  int signatures() const { return static_cast<int>(searches_.size()); }
  /// Stable width of node `i`'s op kind (0 while tuning).
  int stable_width_of(size_t i) const;

 private:
  void freeze(const TunerPlan& plan);
  // Finishes every climb whose widths the models, or else the memory, all hold; true when one finished.
  bool replay_from_models(const TunerPlan& plan);
  // Signature `sig`'s climb carried on over the models' times (or the memory's) to its end; nullopt when the
  // source lacks a width it visits.
  std::optional<WidthSearch> replayed(const TunerPlan& plan, size_t sig, bool from_memory) const;
  // Node `node`'s time at width w as the models hold it, NaN when they cannot stand for a measurement.
  double model_time(const TunerPlan& plan, size_t node, int w) const;
  // Once the last climb stopped (measured or replayed): remembers every climb not cut short, for later processes.
  void remember_finished_climbs();
  // Once every climb has stopped: per op kind, the best width of its largest signature (Strategy 2).
  void settle_stable_widths();
  // From CorunPlanner::kShareFromCores cores: no op wider than sched::parallelism_width_cap of the graph's
  // width-1 times (its average parallelism), so the ops that become ready together find cores.
  void cap_widths_by_parallelism(TunerPlan& plan) const;
  bool load_schedule();
  void save_schedule() const;

  int cores_;
  int fixed_width_;
  bool deterministic_;
  bool models_are_measurements_;
  bool warmed_up_;  // the warm-up run is done (or not needed: simulated kernels have no first-call cost)
  std::string schedule_file_;
  uint64_t graph_hash_ = 0;
  std::vector<int> sig_of_;                 // node -> signature
  std::vector<size_t> first_node_of_sig_;   // signature -> its first node
  std::vector<int> kind_of_sig_;            // signature -> op kind
  std::vector<WidthSearch> searches_;
  std::vector<char> cut_short_;             // signature -> the co-tenancy governor stopped its climb (not remembered)
  std::vector<uint32_t> footprint_of_sig_;  // signature -> footprint
  ClimbMemory memory_;
  std::vector<std::vector<double>> curves_; // signature -> measured curve (after the search)
  std::vector<int> stable_of_kind_;         // op kind -> stable width (0: unknown)
  std::vector<int> frozen_first_, frozen_width_;  // per node, deterministic mode
};

}  // namespace corun::sched
