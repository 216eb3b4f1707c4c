// sched/planner/corun_planner.hpp — Strategy 3 of the co-run paper (section III-D): pack ready ops onto
// idle cores at per-op widths. Plain C++ (no StarPU types); the future `corun` policy (issue 4) wraps it.
//
// State: `cores` cores 0..N-1, each idle or held by one running task whose predicted end time is known.
// Teams are contiguous core ranges, so a task always gets a contiguous block: the lowest-index idle block
// wide enough (first fit).
//
// dispatch(now) places ready tasks while cores are idle, following the paper:
//  1. Candidates of a task: its three fastest widths (known predictions, width <= max_width; ties: narrower).
//  2. Limit: the longest predicted remaining time among running tasks. A candidate co-runs "without
//     decreasing system throughput" when it fits in an idle block and its time is <= the limit.
//  3. Tasks are examined highest level first (then arrival); the first task with such a candidate starts
//     at the narrowest one (it leaves cores for another op: the paper's 18-of-20-cores example).
//  4. No such candidate (also when nothing runs: there is no ongoing op to co-run with): the
//     highest-level task starts at its widest candidate that fits, else at the widest width that fits.
//     The paper says "the most time-consuming operation"; the level (time to the sink) is what makes the
//     critical path decide the order, as in cpf.
//  5. Strategy 2 wins over packing: a width more than 2 cores from the task's stable width is replaced by
//     the stable width if that fits; else the task waits. A waiting co-run task lets the next one be
//     examined; a waiting fallback task stops the round (nothing jumps the critical path).
// Deterministic: the same calls give the same assignments and reasons.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace corun::sched {

struct CorunTask {
  uint64_t id = 0;
  double level = 0.0;             ///< NaN counts as 0
  std::vector<double> predicted;  ///< predicted time at width w is predicted[w-1] (NaN: unknown); may be short
  int stable_width = 1;           ///< Strategy 2 width (>= 1, clamped to max_width and the core count)
  int max_width = 1;              ///< widest team the task may use (>= 1, clamped to the core count)
};

struct CorunAssignment {
  uint64_t id = 0;
  int first_core = 0;
  int width = 1;
  double predicted = 0.0;  ///< time at `width` (NaN unknown)
  std::string reason;      ///< candidates considered and why this one won (for traces)
};

class CorunPlanner {
 public:
  /// Times (predictions, `now`) are in one unit of the caller's choosing.
  explicit CorunPlanner(int cores);

  int cores() const { return static_cast<int>(owner_.size()); }
  int idle_cores() const;
  bool idle(int core) const { return owner_[static_cast<size_t>(core)] == kIdle; }
  size_t ready_count() const { return ready_.size(); }
  size_t running_count() const { return running_.size(); }

  /// Throws corun::Error for invalid widths, a duplicate id, or an id that is running.
  void add_ready(CorunTask task);
  /// Appends the placements possible at time `now` to `out`; placed tasks leave the ready set.
  void dispatch(double now, std::vector<CorunAssignment>& out);
  /// Marks `width` cores from `first` as running `id` until `now + predicted` (used by dispatch; public so
  /// that the adapter, and tests, can account for a task placed by other means). Throws if busy.
  void place(uint64_t id, int first, int width, double predicted, double now);
  /// The task has finished: its cores are idle again. Throws corun::Error for an unknown id.
  void finished(uint64_t id);

  /// Longest predicted remaining time of the running tasks at `now` (>= 0; NaN ends count as 0); -1 when
  /// nothing runs.
  double longest_remaining(double now) const;
  /// Lowest first core of `width` contiguous idle cores, -1 when there is none.
  int first_fit(int width) const;
  /// The three fastest known widths of `task`, fastest first (exposed for the tests).
  static std::vector<int> candidates(const CorunTask& task, int cores);

 private:
  static constexpr uint64_t kIdle = UINT64_MAX;
  struct Ready {
    CorunTask task;
    uint64_t seq;
  };
  struct Running {
    uint64_t id;
    int first;
    int width;
    double end;
  };

  // Tries one task; true (and fills `a`) when it starts now. `fallback`: step 4 rather than step 3.
  bool try_place(const CorunTask& t, double now, double limit, bool fallback, CorunAssignment& a);

  std::vector<uint64_t> owner_;  // per core: running task id or kIdle
  std::vector<Running> running_;
  std::vector<Ready> ready_;     // kept sorted: level descending, then arrival
  uint64_t seq_ = 0;
};

}  // namespace corun::sched
