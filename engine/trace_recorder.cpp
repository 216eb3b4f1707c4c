#include "engine/trace_recorder.hpp"

#include "sched/layout.hpp"

#include <starpu.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace corun::engine {

// Runs on the worker that ran rank 0, after the kernel; starpu_combined_worker_get_size() still gives
// the team width there (starpu-1.3-notes.md (f)). The times and the worker are StarPU's profiling record:
// the kernel's own start and end, not the observer calls'.
void TraceRecorder::on_exit(int /*worker*/, const ObservedTask& observed) {
  if (observed.run != run_ || observed.node < 0 || static_cast<size_t>(observed.node) >= slots_.size()) return;
  starpu_task* task = starpu_task_get_current();
  if (task == nullptr || task->profiling_info == nullptr) return;
  Slot* slot = &slots_[static_cast<size_t>(observed.node)];
  starpu_profiling_task_info* info = task->profiling_info;
  slot->start_us = starpu_timing_timespec_to_us(&info->start_time);
  slot->end_us = starpu_timing_timespec_to_us(&info->end_time);
  slot->worker = info->workerid;
  slot->width = starpu_combined_worker_get_size();
  slot->combined = slot->width > 1 ? starpu_combined_worker_get_id() : -1;
}

void TraceRecorder::begin_run(size_t tasks, uint64_t run) {
  slots_.assign(tasks, Slot{});
  run_ = run;
}

void TraceRecorder::end_run(const detail::GraphImpl& graph, const GraphPlan& plan, bool own_policy, int iteration) {
  const size_t n = slots_.size();
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  for (const Slot& s : slots_) {
    if (s.worker < 0) continue;
    t0 = std::min(t0, s.start_us);
    t1 = std::max(t1, s.end_us);
  }
  if (!(t0 <= t1)) t0 = t1 = 0;
  const std::vector<int> executor_workers = own_policy ? sched::executor_workers() : std::vector<int>{};
  tasks_.assign(n, TraceTask{});
  const bool have_plan = plan.nodes == n && plan.levels.level.size() == n;
  for (size_t i = 0; i < n; ++i) {
    const Slot& s = slots_[i];
    TraceTask& t = tasks_[i];
    const auto& node = graph.nodes[i];
    t.op = codelets::op_info(node.call.kind).name;
    t.node = node.name;
    t.iteration = iteration;
    t.start_us = s.start_us - t0;
    t.end_us = s.end_us - t0;
    t.width = s.width;
    if (own_policy && have_plan && plan.hints[i].placed_first_core >= 0) {
      const auto& h = plan.hints[i];
      t.executor = h.placed_executor;
      t.reason = h.placed_reason;
      for (int c = 0; c < h.placed_width; ++c) {
        const size_t k = static_cast<size_t>(h.placed_first_core + c);
        if (k < executor_workers.size()) t.cores.push_back(executor_workers[k]);
      }
    } else if (s.combined >= 0) {
      int size = 0;
      int* members = nullptr;
      if (starpu_combined_worker_get_description(s.combined, &size, &members) == 0)
        t.cores.assign(members, members + size);
    }
    if (t.cores.empty() && s.worker >= 0) t.cores.push_back(s.worker);
    if (have_plan) {
      if (s.width >= 1 && s.width <= plan.max_width)
        t.predicted_us = plan.predicted[i * static_cast<size_t>(plan.max_width) + static_cast<size_t>(s.width - 1)];
      t.level_us = own_policy ? plan.hints[i].level_us : plan.levels.level[i];
      t.critical = plan.levels.critical[i] != 0;
    }
  }
  meta_ = TraceMeta{};
  meta_.makespan_us = n > 0 ? std::max(t1 - t0, 0.0) : 0.0;
  meta_.critical_path_us = plan.critical_path_us;
  meta_.total_work_us = plan.total_work_us;
  meta_.lower_bound_us = plan.lower_bound_us;
}

}  // namespace corun::engine
