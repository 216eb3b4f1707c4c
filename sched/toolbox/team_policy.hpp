// sched/toolbox/team_policy.hpp — the one StarPU adapter skeleton of corun's policies.
//
// A policy of ours is a planner (sched/planner/, plain C++) plus a small TeamPolicy subclass that turns
// StarPU's calls into planner calls and the planner's decisions into placements. The skeleton owns the
// mechanics every such policy needs, so a policy never repeats them:
//   * the policy mutex (taken with starpu_worker_relax_on, so a worker waiting for it can be woken);
//   * the worker set: CPU workers in hwloc order, a worker id -> core index table, the effective layout;
//   * teams: one StarPU combined worker per core block the policy asks for;
//   * placing a task: its hint's placed_* fields, task->predicted, and the push of the task (width 1) or
//     of the team barrier and one alias per member (width > 1) to exact workers;
//   * completions matched by pointer: per core, the task or alias it was given (`expected`), so a task
//     StarPU ran on a specific worker (bypassing the policy) never frees a core;
//   * measuring team tasks (issue 21 item 7, when PolicyOptions::cotenancy): its TeamWatch (team_watch.hpp)
//     observes each task's start and end on its cores, and how long a team waited for its latest member and
//     how long it ran against its prediction go to team_measured_locked(), so that the policy's
//     TeamWidthGovernor (sched/planner/co_tenancy.hpp) can narrow teams on shared cores;
//   * idle naps (issue 52 item 8, PolicyOptions::idle_naps): while the policy says its cores are shared
//     (width_cap_changed_locked), a worker whose pop finds nothing sleeps instead of spinning (IdleNapRule,
//     sched/planner/idle_nap.hpp) until a task is placed on its core (IdleNapper, idle_napper.hpp).
// The subclass decides (which cores it uses, which teams exist, what the planner does on push, pop, start
// and finish) and keeps its planner's state. See docs/adding-a-policy.md.
//
// Threading: StarPU calls push from any thread and pop and the hooks from every worker, concurrently. The
// hooks named *_locked run with the mutex held; the others must only touch what they document.
#pragma once

#include "sched/layout.hpp"
#include "sched/planner/co_tenancy.hpp"
#include "sched/planner/idle_nap.hpp"
#include "sched/toolbox/idle_napper.hpp"
#include "sched/toolbox/team_watch.hpp"

#include <starpu.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace corun::sched {

/// Where a planner put a task: `width` cores from `first_core` of the policy's ordered cores.
struct Placement {
  starpu_task* task = nullptr;
  int executor = 0;  ///< recorded on the hint (traces); 0 for policies without executors
  int first_core = 0;
  int width = 1;
  double predicted = NAN;               ///< µs at `width` (NaN unknown: StarPU gets 0)
  const std::string* reason = nullptr;  ///< stored on the hint when it asks for one (want_reason)
};

class TeamPolicy {
 public:
  virtual ~TeamPolicy();
  TeamPolicy(const TeamPolicy&) = delete;
  TeamPolicy& operator=(const TeamPolicy&) = delete;

  // StarPU's entry points, called by the struct team_policy<>() builds. Not for the subclasses.
  void add_workers(const int* ids, unsigned n);
  void push(starpu_task* task);
  starpu_task* pop();
  void pre_exec(starpu_task* task);
  void post_exec(starpu_task* task);

  /// Set by a subclass that wants started(). StarPU calls a pre_exec_hook for every task anyway when the
  /// team measurement is on (PolicyOptions::cotenancy), the default.
  static constexpr bool kWatchesStarts = false;

 protected:
  /// `name` goes into error messages ("the <name> policy needs at least one CPU worker");
  /// `one_context_error` is the message when StarPU gives the policy a second set of workers.
  TeamPolicy(const char* name, const char* one_context_error);

  // ---- What a policy decides.

  /// add_workers: `ncores` CPU workers are available. Creates the planner and returns the layout it uses:
  /// its count * width cores are the first of the ordered workers.
  virtual ExecutorLayout start(int ncores) = 0;
  /// add_workers, after start(): creates the teams with add_team().
  virtual void create_teams() = 0;
  /// push_task, with the mutex held: hands `task` to the planner and places what it dispatches.
  /// `caller_core`: the core of the calling worker, -1 for the application thread or a worker not ours.
  virtual void pushed_locked(starpu_task* task, int caller_core) = 0;
  /// pop_task, without the mutex (StarPU's non-blocking drivers call it in a loop while idle): true when
  /// pop_locked() may have a task for `core`. Default: never (every task is pushed to its workers).
  virtual bool may_pop(int /*core*/) const { return false; }
  /// pop_task, with the mutex held and only after may_pop(): a task for `core` made with
  /// hand_to_caller(), or nullptr.
  virtual starpu_task* pop_locked(int /*core*/) { return nullptr; }
  /// pre_exec_hook of a task this core was given (only when the subclass sets kWatchesStarts); no mutex.
  virtual void started(int /*core*/) {}
  /// post_exec_hook of a task this core was given, without the mutex: true when the policy has dealt
  /// with it without locking (then finished_locked() is not called). Default: false.
  virtual bool finished_unlocked(int /*core*/) { return false; }
  /// post_exec_hook of a task this core was given, with the mutex held (every member of a team calls it).
  virtual void finished_locked(int core) = 0;
  /// A team task finished (PolicyOptions::cotenancy only): what it waited and how long it ran. Called with
  /// the mutex held, by its last member, before that member's finished_locked(). Default: ignored.
  virtual void team_measured_locked(const TeamMeasure& /*m*/) {}

  // ---- The mechanics, for the policy.

  /// Cores in use (after start()).
  int cores() const { return static_cast<int>(workers_.size()); }
  /// A combined worker for `width` >= 2 cores from `first` (creation errors name `context`).
  void add_team(int first, int width, const char* context);
  /// true: a placement of width w runs on the team created for the block (0, w), whatever its first core
  /// (corun's shared teams when StarPU's id space cannot hold one per block: for SPMD codelets a team only
  /// sizes the barrier and the perfmodel arch). Default false: each block on its own team.
  void share_teams_by_width(bool shared) { shared_teams_ = shared; }
  /// Records `p` on its task (hint, predicted time) and pushes it to its idle workers, which wakes them.
  /// With the mutex held.
  void place(const Placement& p);
  /// The pop variant of place() for width 1: records `p` and returns its task for the calling worker,
  /// which runs it on `p.first_core` (pop_task must not push to its own queue). With the mutex held.
  starpu_task* hand_to_caller(const Placement& p);
  /// Wakes the worker of `core` so that it calls pop_task again: after a policy left work for it that only
  /// its pop takes (corun's offers). Natively StarPU 1.3's workers poll and this is only a hint; with
  /// blocking drivers (the SimGrid build) a worker whose pop returned nothing sleeps until woken, and
  /// without it an offer would never be taken. With the mutex held; the wake happens once it is released.
  void wake(int core);
  /// After `governor` (the policy's, named `policy` in messages) changed its cap: reports the change
  /// (report_width_change) and takes a cap as the evidence of another process on the cores, so that idle
  /// workers nap instead of spinning (PolicyOptions::idle_naps auto) until the governor's probes widen the
  /// teams again. With the mutex held (team_measured_locked).
  void width_cap_changed_locked(const char* policy, const TeamWidthGovernor& governor);

 private:
  // pop found nothing for `core`: sleeps as IdleNapRule says (no mutex held). Returns whether it slept.
  bool nap_if_idle(int core);
  void lock();
  void unlock();
  void record(const Placement& p) const;
  int team_for(int first, int width) const;
  // The core of worker `worker`, -1 when it is not one of ours.
  int core_of(int worker) const { return worker < 0 ? -1 : worker_core_[static_cast<size_t>(worker)]; }

  const char* name_;
  const char* one_context_error_;
  bool started_ = false;
  starpu_pthread_mutex_t mutex_;
  std::vector<int> pending_wakes_;  // workers wake() asked for, woken by unlock() after the mutex (under it)
  std::vector<int> workers_;                    // basic worker ids, in core order
  std::vector<int> worker_core_;                // worker id -> core index (-1: not ours)
  std::map<std::pair<int, int>, int> team_id_;  // (first core, width) -> combined worker id
  bool shared_teams_ = false;
  // Per core: the task (or alias) it was given. Matching by pointer, never through the job: a member may
  // run post_exec_hook after rank 0 freed the job. Written under the mutex before the task reaches the
  // core's queue and reset by that core only when it finishes, so the core reads it without the mutex.
  std::vector<starpu_task*> expected_;
  bool measure_teams_ = false;
  TeamWatch team_watch_;  // when measure_teams_
  IdleNapRule nap_rule_{IdleNaps::off};  // set in add_workers from PolicyOptions::idle_naps
  IdleNapper napper_;
  std::atomic<bool> cores_shared_{false};
  // Per core: when its last task ended (µs; the policy start before its first). Its worker reads and writes it.
  std::vector<double> idle_since_;
};

namespace detail {
void attach(unsigned ctx, std::unique_ptr<TeamPolicy> policy);
starpu_sched_policy policy_struct(const char* name, const char* description, void (*init)(unsigned),
                                  bool watches_starts);
}  // namespace detail

/// The StarPU policy struct of `Policy` (a TeamPolicy), constructed as Policy(args...) per scheduling
/// context. `name` is CORUN_SCHED's value.
template <class Policy, auto... args>
starpu_sched_policy team_policy(const char* name, const char* description) {
  return detail::policy_struct(
      name, description, [](unsigned ctx) { detail::attach(ctx, std::make_unique<Policy>(args...)); },
      Policy::kWatchesStarts);
}

}  // namespace corun::sched
