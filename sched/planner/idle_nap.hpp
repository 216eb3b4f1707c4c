// sched/planner/idle_nap.hpp — idle workers that sleep instead of spinning on shared cores (issue 52 item 8).
//
// Plain C++, no StarPU. StarPU 1.3's non-blocking drivers (Debian's build) call pop_task in a loop while a
// worker is idle: an idle worker spins and keeps its core. Alone that costs nothing but power. With another
// process on the same cores (two trainings on two cores: four workers), a spinning worker takes time slices
// (milliseconds) that the other process's running tasks, and our own critical path, wait for. This rule
// says when an idle worker sleeps instead (a nap; the toolbox wakes it as soon as a task is placed on its
// core, sched/toolbox/idle_napper.hpp), and for how long at most:
//
//   * never while the policy has not seen its cores shared (mode when_shared: the co-tenancy governor's cap,
//     sched/planner/co_tenancy.hpp, is its evidence) nor with mode off;
//   * never in the first kSpinUs of idleness: a task's successors usually arrive within microseconds of its
//     end (the finishing worker pushes them), and a spinning worker takes them without a wake-up;
//   * then naps as long as it has been idle (exponential back-off), from kMinNapUs to kMaxNapUs: a worker
//     idle for long is likely to stay so, and the bound caps what a missed wake-up can cost (a task StarPU
//     queued on the worker without the policy).
// Reversible with the governor: when its probes widen the teams again, the cores are no longer seen shared.
// Results never depend on it: it changes when a worker looks for work, never what runs or where.
#pragma once

#include <string>

namespace corun::sched {

enum class IdleNaps {
  off,          ///< always spin (StarPU's behaviour)
  when_shared,  ///< nap while the policy sees its cores shared (the default)
  always,       ///< nap whenever idle long enough (tests; a machine known to be shared)
};

class IdleNapRule {
 public:
  static constexpr double kSpinUs = 100.0;     // spin this long after the last task before the first nap
  static constexpr double kMinNapUs = 100.0;   // below this a timed sleep costs more than it frees
  static constexpr double kMaxNapUs = 2000.0;  // under a CFS slice (3-6 ms): a missed wake costs less than one

  explicit IdleNapRule(IdleNaps mode) : mode_(mode) {}

  /// How long a worker idle for `idle_us` sleeps before it looks for work again (µs; 0: spin, i.e. return at
  /// once). `shared`: the policy has seen its cores shared.
  double nap_us(bool shared, double idle_us) const;

  IdleNaps mode() const { return mode_; }

 private:
  IdleNaps mode_;
};

/// The mode a CORUN_IDLE_NAPS value names (Config::idle_naps, checked by engine/config.cpp): "off", "always",
/// and "auto" (when_shared).
IdleNaps parse_idle_naps(const std::string& value);

}  // namespace corun::sched
