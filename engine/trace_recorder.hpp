// engine/trace_recorder.hpp — collects the timeline of a run from StarPU's per-task profiling.
//
// Each task of a traced run gets a completion callback that copies its kernel start/end, the worker
// that ran rank 0 and the team (width, combined worker) into a slot of its node; after the run the slots
// become TraceTasks, with predictions, levels and the critical path from the run's GraphPlan.
#pragma once

#include <corun/trace.hpp>

#include "engine/planning.hpp"

#include <vector>

struct starpu_task;

namespace corun::engine {

class TraceRecorder {
 public:
  /// Attaches the callbacks to this run's tasks (before submission).
  void begin_run(const std::vector<starpu_task*>& tasks);
  /// Builds the timeline once every task has completed.
  void end_run(const detail::GraphImpl& graph, const GraphPlan& plan, bool own_policy, int iteration);

  const std::vector<TraceTask>& tasks() const { return tasks_; }
  const TraceMeta& meta() const { return meta_; }

  struct Slot {
    double start_us = 0, end_us = 0;
    int worker = -1, width = 1, combined = -1;
  };

 private:
  std::vector<Slot> slots_;
  std::vector<TraceTask> tasks_;
  TraceMeta meta_;
};

}  // namespace corun::engine
