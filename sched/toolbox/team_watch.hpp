// sched/toolbox/team_watch.hpp — the co-tenancy measurement of team tasks (issue 21 item 7), an observer of
// the starts and ends of the tasks a TeamPolicy placed, per core (set_up, on_entry, on_exit: the shape of the
// engine's observers, corun/observer.hpp).
//
// It stays in the policy rather than being one of the engine's observers because it measures something they
// do not see: the time from the placement (push, which only the policy makes) to the team's start, i.e. how
// long the team waited for its latest member, and the run time of that placement against the prediction the
// policy chose it with. Its result must reach the policy's TeamWidthGovernor (sched/planner/co_tenancy.hpp)
// under the policy mutex before the team's cores are freed, so that the next placement on them sees the new
// cap; the engine's on_exit comes later, from the task's callback, once the policy has freed them. And being on
// by default under corun's policies (CORUN_COTENANCY), it would end the engine's no-observer fast path there.
//
// Threading: placed() runs under the policy mutex before the push, so a member reads its slot after receiving
// its alias; on_entry/on_exit run on the members, without the mutex (atomics). A block gets its next task only
// after its last member's finished_locked(), which comes after on_exit, so a slot is never reset while a
// member still reads it.
#pragma once

#include "sched/planner/co_tenancy.hpp"

#include <atomic>
#include <memory>

namespace corun::sched {

class TeamWatch {
 public:
  /// The policy's `cores` (add_workers).
  void set_up(int cores);
  /// A task placed on `width` cores from `first_core`, predicted to take `predicted_us` (NaN or 0: unknown).
  /// `cold`: the graph's first run (not measured). Width 1 is not measured: no member waits for another.
  void placed(int first_core, int width, double predicted_us, bool cold);
  /// The task `core` was given starts on it (the policy's pre_exec_hook; after the team barrier).
  void on_entry(int core);
  /// It ended on `core` (post_exec_hook). True on the last member of a measured team task: `m` is filled.
  bool on_exit(int core, TeamMeasure& m);

 private:
  struct Slot {
    int first = -1;  // first core of the team this core belongs to (-1: not in a team)
    int width = 0;   // on the first core: team width
    double placed = 0, predicted = 0;
    bool cold = false;
    std::atomic<int> started{0}, finished{0};
    std::atomic<double> start{0};  // on the first core: when the last member started
  };
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace corun::sched
