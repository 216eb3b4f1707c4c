// sched/planner/corun_planner.hpp — Strategies 3-4 of the co-run paper (section III-D): pack ready ops onto
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
//     highest-level task starts at the fitting candidate of least core-time (width x time) when other
//     tasks are ready (it leaves them cores: throughput), at its fastest fitting candidate when it is alone
//     (latency), else at the widest width that fits.
//     The paper says "the most time-consuming operation"; the level (time to the sink) is what makes the
//     critical path decide the order, as in cpf.
//  5. Strategy 2 wins over packing: a width more than 2 cores from the task's stable width is replaced by
//     the stable width if that fits; else the task waits. A waiting co-run task lets the next one be
//     examined; a waiting fallback task stops the round (nothing jumps the critical path).
// Many cores (core sharing, on from kShareFromCores cores; set_core_sharing): the paper's rules were made
// for a 20-core node whose op curves have an interior optimum. On a 64-core machine an op's curve keeps
// falling to the full width, so its three fastest widths are all near 64 and its stable width is 64: every
// op runs alone on every core, one after the other (the graph's parallelism is thrown away). With core
// sharing, a task may use at most its share of the idle cores, in proportion to its width-1 time among the
// ready tasks not yet placed (idle / their count when a time is unknown), and:
//  - candidates are the three fastest known widths within that share;
//  - the fallback task starts at its fastest fitting candidate even when others are ready (the share
//    already leaves them their cores; least core-time would pick width 1 under any Amdahl curve);
//  - Strategy 2 does not replace the width: the kind's stable width, measured alone, is the whole machine;
//  - earliest finish: a task that would start narrow waits when the cores that running tasks release
//    would let it finish sooner (by kWaitGain) at a wider width.
// Three additions, each off unless asked for:
//  - Interference feedback (the paper's "Discussion"): the model predicts ops alone, so a pair of op kinds
//    that measured slow together (see interference.hpp) is forbidden; a task whose kind is forbidden with
//    a running task's kind does not start, in any pass (as a fallback task it stops the round).
//  - Fixed placement (deterministic mode): a task with fixed_first >= 0 starts exactly on its block once
//    the whole block is idle, else it is skipped without stopping the round; no packing rule applies to
//    it, and the fallback task is the highest-level task without a fixed block.
//  - Strategy 4 (SMT): with threads_per_core > 1, while one task holds all cores ("scalable" op, nothing
//    can co-run by Strategy 3), a task whose Strategy 2 width is 1 and whose width-1 prediction is known
//    and <= that op's remaining time runs on a sibling hardware thread of one of its cores (lowest core,
//    then lowest thread, first; one task per sibling slot). Only such small ops: the paper finds
//    hyper-threading slows an op down when both threads run big work. Sibling slots never block a core's
//    primary thread (a sibling task outliving the big op shares its core with whatever starts there).
//  - Busy cores (issue 21 item 7, set_core_slowdowns): a core another process uses runs our tasks slower
//    by a measured factor (core_speed.hpp). A width's time is then its prediction x the slowest core of
//    the best idle block of that width (least slowdown; ties: the preferred core, then the lowest), in
//    every rule above, so a quiet core wins over a busy one and a team with a busy member loses to a
//    narrower quiet block; a task whose only idle block is busy still starts there (the adapter binds it to
//    that core late: a quiet core that frees first takes it). All factors 1 (the default): exactly the
//    rules above.
// Deterministic: the same calls give the same assignments and reasons.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace corun::sched {

struct CorunTask {
  uint64_t id = 0;
  double level = 0.0;             ///< NaN counts as 0
  std::vector<double> predicted;  ///< predicted time at width w is predicted[w-1] (NaN: unknown); may be short
  int stable_width = 1;           ///< Strategy 2 width (>= 1, clamped to max_width and the core count)
  int max_width = 1;              ///< widest team the task may use (>= 1, clamped to the core count)
  int kind = -1;                  ///< op kind for forbid_corun (-1: never conflicts)
  int fixed_first = -1;           ///< >= 0: run only on cores [fixed_first, fixed_first + fixed_width)
  int fixed_width = 0;            ///< >= 1 when fixed_first >= 0; alone: exactly this width, on any block
  bool explain = true;            ///< fill CorunAssignment::reason (off: saves the formatting)
};

struct CorunAssignment {
  uint64_t id = 0;
  int first_core = 0;
  int width = 1;
  double predicted = 0.0;  ///< time at `width` (NaN unknown)
  std::string reason;      ///< candidates considered and why this one won (for traces)
  int thread = 0;          ///< hardware thread within each core: 0 primary, 1.. sibling (Strategy 4)
};

class CorunPlanner {
 public:
  /// Times (predictions, `now`) are in one unit of the caller's choosing. `threads_per_core` > 1 enables
  /// Strategy 4 (sibling slots); 1 (no SMT) keeps every task on primary threads.
  explicit CorunPlanner(int cores, int threads_per_core = 1);

  /// Core sharing is on by default from this many cores (see the header comment).
  static constexpr int kShareFromCores = 16;
  void set_core_sharing(bool on) { sharing_ = on; }
  bool core_sharing() const { return sharing_; }

  int cores() const { return static_cast<int>(owner_.size()); }
  int threads_per_core() const { return threads_per_core_; }
  int idle_cores() const;
  bool idle(int core) const { return owner_[static_cast<size_t>(core)] == kIdle; }
  size_t ready_count() const { return ready_.size(); }
  size_t running_count() const { return running_.size(); }

  /// Tasks of kinds `kind_a` and `kind_b` (>= 0; may be equal) no longer start while the other runs.
  /// Symmetric. Throws corun::Error for a negative kind (-1 means "never conflicts").
  void forbid_corun(int kind_a, int kind_b);
  /// True when forbid_corun(a, b) or (b, a) was called; false whenever a kind is negative.
  bool forbidden(int a, int b) const;

  /// Throws corun::Error for invalid widths, a fixed block outside the cores, a duplicate id, or an id that
  /// is running.
  void add_ready(CorunTask task);
  /// Appends the placements possible at time `now` to `out`; placed tasks leave the ready set.
  /// `preferred_core` (optional): the first task placed at a width whose block can start there goes
  /// there rather than first fit — the core that just released it has its inputs in cache.
  void dispatch(double now, std::vector<CorunAssignment>& out, int preferred_core = -1);
  /// Marks `width` cores from `first` as running `id` until `now + predicted` (used by dispatch; public so
  /// that the adapter, and tests, can account for a task placed by other means; such a task has kind -1
  /// and primary threads). Throws if busy.
  void place(uint64_t id, int first, int width, double predicted, double now);
  /// The task has finished: its cores (or its sibling slot) are idle again. Throws corun::Error for an
  /// unknown id.
  void finished(uint64_t id);

  /// Longest predicted remaining time of the running tasks at `now` (>= 0; NaN ends count as 0); -1 when
  /// nothing runs.
  double longest_remaining(double now) const;
  /// Lowest first core of `width` contiguous idle cores, -1 when there is none.
  int first_fit(int width) const;
  /// The block for a placement of `width`: at the preferred core when that block is idle, else first fit.
  int block_for(int width) const;
  /// The three fastest known widths of `task`, fastest first (exposed for the tests).
  static std::vector<int> candidates(const CorunTask& task, int cores);
  /// Per core, how much slower than its model a task runs there (>= 1; 1: not busy). Throws corun::Error
  /// for a wrong size or a factor < 1 (or NaN).
  void set_core_slowdowns(std::vector<double> slowdowns);
  const std::vector<double>& core_slowdowns() const { return slowdown_; }
  /// The idle block of `width` with the least slowdown (ties: preferred core, then lowest); -1 when none
  /// fits. `slowdown`: that block's slowest core.
  int best_block(int width, double* slowdown) const;

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
    int kind;
    int thread;  // 0: owns owner_[first, first + width); > 0: owns sibling slot (first, thread)
  };

  // One placement of the round at `now`; false when nothing (more) can start.
  bool place_one(double now, CorunAssignment& a);
  // Tries one task; true (and fills `a`) when it starts now. `fallback`: step 4 rather than step 3.
  bool try_place(const CorunTask& t, double now, double limit, bool fallback, bool others_ready, CorunAssignment& a);
  // Core sharing: the widest team `t` may take now, its share of the idle cores in proportion to its
  // width-1 time among the unplaced ready tasks (by count when one is unknown); else cores().
  int share(const CorunTask& t) const;
  // Core sharing: (time from `now`, width) of the release of running tasks after which `t` would finish
  // first, at its fastest known width within the cores idle by then; width 0 when nothing runs.
  std::pair<double, int> earliest_finish(const CorunTask& t, double now) const;
  // Core sharing: a task waits for more cores only when that finishes it before this share of its end now.
  static constexpr double kWaitGain = 0.8;
  // Fixed placement: true (and fills `a`) when the task's whole block is idle.
  bool try_fixed(const CorunTask& t, double now, CorunAssignment& a);
  // Strategy 4: places the first eligible ready task on a sibling slot of a full-width task.
  bool try_sibling(double now, CorunAssignment& a);
  // True when `t` may not start beside some running task (forbid_corun).
  bool conflicts(const CorunTask& t) const;
  void occupy(uint64_t id, int first, int width, int thread, int kind, double predicted, double now);
  uint64_t& sibling(int core, int thread) {
    return siblings_[static_cast<size_t>(core * (threads_per_core_ - 1) + thread - 1)];
  }

  int threads_per_core_;
  std::vector<uint64_t> owner_;     // per core: running task id or kIdle (primary threads)
  std::vector<uint64_t> siblings_;  // per core, per sibling thread 1..threads_per_core-1: id or kIdle
  std::vector<Running> running_;
  std::vector<Ready> ready_;                 // kept sorted: level descending, then arrival
  std::set<std::pair<int, int>> forbidden_;  // (min kind, max kind)
  uint64_t seq_ = 0;
  int preferred_ = -1;  // during dispatch: the cache-warm core, until one placement used it
  std::vector<double> slowdown_;  // per core (set_core_slowdowns), all 1 by default
  bool any_slow_ = false;
  bool sharing_ = false;
};

}  // namespace corun::sched
