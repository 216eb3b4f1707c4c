// sched/planner/cpf_planner.hpp — Graphi's central scheduler as plain C++ (no StarPU types).
//
// The machine is cut into `count` executors of `width` consecutive cores (Graphi section 4.2: symmetric
// executors). Ready tasks wait in one central heap ordered by level (critical-path first, section 4.3:
// level = longest predicted time from the task to the sink) or by arrival (the naive FIFO baseline).
// Whenever executors are idle, the task with the highest level goes to the lowest-numbered idle executor
// (Graphi's bit-scan over the idle bitmap), or to the executor whose worker made it ready if that one is
// idle (cache locality; Graphi's executors trigger their successors themselves). An executor holds one task at a time, so a width-w task only
// starts when all its cores are free and no team member ever waits for another task to finish.
//
// Inside its executor a task runs on the first w cores, w one of the executor's team widths (1, 2, 4, ...,
// and the executor width). It runs at the full executor width unless the per-width model predicts that a
// narrower team is faster (tiny ops pay tens of µs of team synchronisation).
//
// A lone task on an idle machine (merge_when_alone): when every executor is idle and exactly one task is ready,
// nothing else can become ready before it ends (nothing runs), so cores left idle would stay idle. The task
// then runs on a team spanning 2, 4, ... executors from executor 0 (merged_widths()), the widest its maximum
// allows, when its model predicts that team faster than its executor-width time, or, not measured merged yet,
// when it takes at least kTryMergedFromUs at its executor's width (that run calibrates the merged width). A
// chain of ops (a CNN's stem, where GoogLeNet's forward left one of two cores idle for its first 20 ms) gets
// the whole machine.
//
// The StarPU adapter (sched/cpf/) feeds ready tasks in, applies the assignments and reports finished
// executors; it holds the lock. The planner is deterministic: the same calls give the same assignments.
#pragma once

#include "sched/layout.hpp"

#include <cstdint>
#include <queue>
#include <vector>

namespace corun::sched {

enum class ReadyOrder {
  level,    ///< critical-path first: highest level, then arrival order
  arrival,  ///< central FIFO
};

/// A task that became ready, as the planner sees it.
struct PlannerTask {
  uint64_t id = 0;               ///< opaque to the planner (the adapter uses the starpu_task pointer)
  double level = 0.0;            ///< NaN counts as 0
  int max_width = 1;             ///< widest team the task can use (>= 1)
  int fixed_width = 0;           ///< > 0: run at this width (clamped to what the executor offers)
  std::vector<double> predicted; ///< predicted µs per width of team_widths() (same order; NaN unknown);
                                 ///< may be empty (no model)
  std::vector<double> predicted_merged;  ///< the same for merged_widths() (may be empty)
};

/// Where a task runs: `width` cores starting at `first_core` (an index into the ordered cores).
struct Assignment {
  uint64_t id = 0;
  int executor = 0;
  int first_core = 0;
  int width = 1;
  double level = 0.0;
  double predicted = 0.0;  ///< µs at the chosen width (NaN unknown)
};

/// Team widths an executor of `executor_width` cores offers, ascending: 1, the powers of two below the
/// width, and the width itself (the one rule the planner, the profiler and the tests share).
std::vector<int> team_widths_of(int executor_width);

/// A lone task not yet measured on merged executors is tried there only from this many µs at its executor's
/// width: far above a team's synchronisation (bench/team_latency.sh: a few µs per task at 2 cores).
inline constexpr double kTryMergedFromUs = 200.0;

class CpfPlanner {
 public:
  /// `layout.count * layout.width` cores in all (the adapter has clamped it to the workers it has).
  CpfPlanner(ExecutorLayout layout, ReadyOrder order, bool narrow_when_faster, bool merge_when_alone = false);

  /// Team widths an executor offers, ascending: 1, powers of two below the executor width, the width.
  const std::vector<int>& team_widths() const { return widths_; }
  /// Widths of the teams that span 2, 4, ... executors from executor 0 (powers of two of them, and all when
  /// their count is not one), ascending; empty without merge_when_alone or with one executor.
  const std::vector<int>& merged_widths() const { return merged_; }
  const ExecutorLayout& layout() const { return layout_; }

  void add_ready(PlannerTask task);
  /// Appends the assignments possible now to `out`: highest level first, each to the lowest idle executor,
  /// except that the first goes to `preferred` when that one is idle (the executor whose worker made the
  /// task ready: its caches hold the task's inputs); a lone task on an idle machine may get merged executors
  /// (merge_when_alone, above).
  void dispatch(std::vector<Assignment>& out, int preferred = -1);
  /// Gives the highest-level ready task to `executor` if it is idle; false when it is busy or nothing is
  /// ready. Never a merged team (a worker's pop hands itself one task of width 1 at most).
  bool dispatch_to(int executor, Assignment& out);
  /// The task on `executor` has finished; the executor is idle again.
  void finished(int executor);

  size_t ready_count() const { return ready_.size(); }
  int idle_executors() const { return idle_count_; }
  bool idle(int executor) const { return busy_[static_cast<size_t>(executor)] == 0; }

  /// The width a task runs at in an executor (exposed for the tests).
  int choose_width(const PlannerTask& task, double* predicted = nullptr) const;

 private:
  struct Entry {
    PlannerTask task;
    uint64_t seq;
  };
  struct Before {  // priority_queue puts the "largest" on top
    ReadyOrder order;
    bool operator()(const Entry& a, const Entry& b) const;
  };

  int first_idle() const;
  Assignment assign(int executor);  // pops the top task onto `executor`
  bool assign_merged(Assignment& out);  // the lone ready task onto merged executors, if it gains

  ExecutorLayout layout_;
  ReadyOrder order_;
  bool narrow_;
  std::vector<int> widths_;
  std::vector<int> merged_;
  std::vector<char> busy_;
  int idle_count_;
  uint64_t seq_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, Before> ready_;
};

}  // namespace corun::sched
