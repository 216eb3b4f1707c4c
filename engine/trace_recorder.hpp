// engine/trace_recorder.hpp — collects the timeline of a run from StarPU's per-task profiling.
//
// An observer of the run's tasks (engine/task_observers.hpp), attached for the runs the engine records
// (traced or tuning runs, which run alone): each task's end copies its kernel start/end, the worker that ran
// rank 0 and the team (width, combined worker) into a slot of its node; after the run the slots become
// TraceTasks, with predictions, levels and the critical path from the run's GraphPlan.
#pragma once

#include <corun/observer.hpp>
#include <corun/trace.hpp>

#include "engine/planning.hpp"

#include <cstdint>
#include <vector>

namespace corun::engine {

class TraceRecorder : public TaskObserver {
 public:
  /// Empties the slots for run `run` of `tasks` tasks (before submission; the engine then attaches it).
  void begin_run(size_t tasks, uint64_t run);
  /// Builds the timeline once every task has completed.
  void end_run(const detail::GraphImpl& graph, const GraphPlan& plan, bool own_policy, int iteration);

  void set_up(int /*num_workers*/) override {}
  void on_entry(int /*worker*/, const ObservedTask& /*task*/) override {}
  /// On the worker that ran rank 0, after the kernel: the task's profiling record into its node's slot.
  void on_exit(int worker, const ObservedTask& task) override;

  const std::vector<TraceTask>& tasks() const { return tasks_; }
  const TraceMeta& meta() const { return meta_; }

  struct Slot {
    double start_us = 0, end_us = 0;
    int worker = -1, width = 1, combined = -1;
  };

 private:
  std::vector<Slot> slots_;
  uint64_t run_ = 0;
  std::vector<TraceTask> tasks_;
  TraceMeta meta_;
};

}  // namespace corun::engine
