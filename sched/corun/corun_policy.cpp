// sched/corun/corun_policy.cpp — the StarPU adapter of the co-run planner (policy `corun`).
//
// Mechanism only; CorunPlanner decides which ready task starts, at which width, on which block of cores,
// and the mechanics common to our policies (lock, worker order, teams, pushing a placement to its workers)
// are the toolbox's (sched/toolbox/team_policy.hpp). The adapter
//   * treats the ordered workers as one row of cores: a team is any contiguous block of that row;
//   * creates the teams: one combined worker per contiguous block of width >= 2 when StarPU's worker id
//     space holds them all (cores*(cores-1)/2 of them: up to 21 cores with maxcpus 256), otherwise one per
//     width on the first cores, shared by every block of that width. For SPMD codelets (all of corun's) a
//     combined worker only gives the barrier its size and the perfmodel its arch {CPU, ncores = w}
//     (src/drivers/cpu/driver_cpu.c:208-233), so sharing is exact; a FORKJOIN codelet would be bound to
//     the wrong cores, so it runs on one core in that mode;
//   * pushes a task only to idle cores (all of its block), so every member's queue holds at most that
//     task: team tasks can never be queued in different orders on two members;
//   * on the last member's completion, tells the planner the block is idle, feeds the measured time
//     of a task that co-ran into the interference detector (pairs of op kinds that slow each other down
//     are never co-run again), and dispatches again.
// Time is StarPU's clock (starpu_timing_now, µs), the unit of the engine's predictions.
#include "sched/corun/corun_policy.hpp"

#include "sched/hint.hpp"
#include "sched/layout.hpp"
#include "sched/planner/co_tenancy.hpp"
#include "sched/planner/core_speed.hpp"
#include "sched/planner/corun_planner.hpp"
#include "sched/planner/interference.hpp"
#include "sched/toolbox/team_policy.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace corun::sched {
namespace {

// Interference: a co-run task this much slower than its model is a slowdown event; a pair of op kinds is
// no longer co-run after kMinEvents events that are at least kMinShare of its co-runs. On the shared 2-core
// VM, 1.5x with 2 events forbade 18 pairs in 10 LSTM steps from noise alone; 3 events and a majority
// forbid none there, while a pair that always interferes is caught after 3 co-runs. Slowdowns are against
// the median slowdown of the last kBaselineWindow ops (interference.hpp): the other processes on a shared
// machine slow every op down, and that is not interference between two of ours.
constexpr double kSlowdown = 1.5;
constexpr int kMinEvents = 3;
constexpr double kMinShare = 0.5;
constexpr int kBaselineWindow = 64;
// Per-core speeds are recomputed after this many measured width-1 tasks (a few µs for 64 cores).
constexpr unsigned long kSpeedEvery = 8;
// Below this predicted time, wake-up latency and clock noise dominate the measurement: no verdict.
constexpr double kMinObservedUs = 100.0;
// An offer to a core not popped within this time: its worker does not have its core (a quiet core's worker
// polls and pops an offer within microseconds), and an idle worker takes the task (late binding, below).
constexpr double kStaleOfferUs = 100.0;

struct Running {
  uint64_t id = 0;
  int width = 0;
  int members_left = 0;
  int kind = -1;
  double predicted = NAN;
  double start = 0.0;                // kernel start (pre_exec_hook of the block's first core)
  double placed = 0.0;               // when the planner gave it its cores (pushed or offered)
  double cpu_start = 0.0;            // the first core's thread CPU time then (µs)
  double cpu_us = NAN;               // the first core's thread CPU time over the task (its post_exec_hook)
  std::vector<int> corunning_kinds;  // kinds that ran at the same time, at any moment of its run
};

// `width_cap`: the co-tenancy governor's widest allowed team (TeamWidthGovernor::kNoCap: none), for tasks
// without a fixed width.
CorunTask corun_task(starpu_task* task, const CorunPlanner& planner, bool shared_teams, int width_cap) {
  CorunTask t;
  t.id = reinterpret_cast<uint64_t>(task);
  const starpu_codelet* cl = task->cl;
  const bool parallel = cl->type == STARPU_SPMD || (cl->type == STARPU_FORKJOIN && !shared_teams);
  int max_width = parallel ? std::max(1, cl->max_parallelism) : 1;
  const auto* h = static_cast<const TaskHint*>(task->sched_data);
  if (h != nullptr) {
    t.level = h->level_us;
    if (h->max_width > 0) max_width = std::min(max_width, h->max_width);
    t.predicted.assign(h->predicted_us, h->predicted_us + std::max(0, h->npredicted));
    t.kind = h->kind;
  }
  t.explain = policy_options().verbose_sched || (h != nullptr && h->want_reason);
  // A task that asks for an exact width (calibration, a frozen schedule, a test) keeps it; the width search's
  // tuning runs do not: a team under test that waits on a busy core stalls the whole serial run (a 13 s
  // LSTM step against 0.4 s on the loaded 2-core VM), so the cap applies and the search ends there.
  if (h == nullptr || h->fixed_width == 0 || h->width_search) max_width = std::min(max_width, width_cap);
  t.max_width = std::min(max_width, planner.cores());
  // Strategy 2: the width of the op's kind; without one, the fastest known width, else the widest.
  int stable = h != nullptr ? h->stable_width : 0;
  if (stable <= 0) {
    for (int w = 1; w <= t.max_width && w <= static_cast<int>(t.predicted.size()); ++w) {
      const double p = t.predicted[static_cast<size_t>(w - 1)];
      if (!std::isnan(p) && (stable == 0 || p < t.predicted[static_cast<size_t>(stable - 1)])) stable = w;
    }
    if (stable == 0) stable = t.max_width;
  }
  t.stable_width = std::min(stable, t.max_width);
  if (h != nullptr && h->fixed_width > 0) {
    t.fixed_width = std::min(h->fixed_width, t.max_width);
    t.fixed_first = h->fixed_first >= 0 && h->fixed_first + t.fixed_width <= planner.cores() ? h->fixed_first : -1;
  }
  return t;
}

// The calling thread's CPU time in µs (NaN when the clock is unavailable).
double thread_cpu_us() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return NAN;
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

class CorunPolicy final : public TeamPolicy {
 public:
  static constexpr bool kWatchesStarts = true;  // the measured time of a task starts in started()

  CorunPolicy() : TeamPolicy("corun", "the corun policy supports one scheduling context with a fixed worker set") {}

 private:
  struct Offer {  // a width-1 task offered to a core (late binding, may_pop())
    starpu_task* task = nullptr;
    double predicted = NAN;
    std::string reason;
  };

  ExecutorLayout start(int ncores) override {
    planner_ = std::make_unique<CorunPlanner>(ncores);
    speed_ = std::make_unique<CoreSpeed>(ncores);
    offers_.assign(static_cast<size_t>(ncores), Offer{});
    offered_ = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(ncores));
    offered_since_ = std::make_unique<std::atomic<double>[]>(static_cast<size_t>(ncores));
    for (int c = 0; c < ncores; ++c) offered_[static_cast<size_t>(c)].store(false);
    offers_out_.store(0);
    block_of_.assign(static_cast<size_t>(ncores), -1);
    running_.assign(static_cast<size_t>(ncores), Running{});
    cpu_end_.assign(static_cast<size_t>(ncores), NAN);
    return ExecutorLayout{1, ncores};
  }

  void create_teams() override {
    const int n = cores();
    const int blocks = n * (n - 1) / 2;
    const int room = std::min(STARPU_NMAXWORKERS - static_cast<int>(starpu_worker_get_count()), STARPU_MAXCPUS);
    shared_teams_ = blocks > room;
    share_teams_by_width(shared_teams_);
    for (int w = 2; w <= n; ++w)
      for (int first = 0; first + w <= n && (first == 0 || !shared_teams_); ++first)
        add_team(first, w, "the corun policy's teams");
  }

  // `caller_core`: what it just released reads what it just wrote.
  // Late binding (issue 21 item 7, with CORUN_COTENANCY=auto): a width-1 task for another core than the
  // calling worker's is not pushed there, where it would wait while the OS runs another process on that
  // core (a time slice: milliseconds); it is offered, taken by that worker's next pop (idle workers poll,
  // so it starts as soon as the worker has its core: on a quiet machine at once; it is also woken, for
  // drivers that block when idle, as under SimGrid) or by a core at least as
  // fast that frees first (steal_offer). On the loaded 2-core VM with a spin loop on cpu 0 the LSTM step
  // went from about 1.45x to 1.3x lws. Pinned tasks (tuning runs, frozen schedules) are always pushed.
  // An idle worker also takes an offer to another core that was not popped within kStaleOfferUs: that core's
  // worker does not have its core (the OS runs another process there for a time slice, milliseconds), and
  // the task may be on the critical path. Before this, both cores idled for whole time slices: the quiet core
  // had nothing (its successors waited for the offered task), the busy core's worker was descheduled (a
  // trace of the LSTM step beside a spin loop: the quiet core idle 61% of the step under corun, 22% under cpf).
  bool may_pop(int core) const override {
    if (offered_[static_cast<size_t>(core)].load(std::memory_order_acquire)) return true;
    if (offers_out_.load(std::memory_order_relaxed) == 0) return false;
    return stale_offer(core, starpu_timing_now()) >= 0;
  }

  starpu_task* pop_locked(int core) override {
    const double now = starpu_timing_now();
    if (!offered_[static_cast<size_t>(core)].load(std::memory_order_relaxed)) {
      const int b = planner_->idle(core) ? stale_offer(core, now) : -1;
      if (b < 0) return nullptr;  // popped or stolen meanwhile, or this core holds a task already
      Offer o = move_offer(b, core, now, "takes the task offered to core %d, not popped for %.0f us");
      return hand_to_caller(Placement{o.task, 0, core, 1, o.predicted, &o.reason});
    }
    Offer o = take_offer(core);
    running_[static_cast<size_t>(core)].start = now;
    return hand_to_caller(Placement{o.task, 0, core, 1, o.predicted, &o.reason});
  }

  // The core, other than `core`, whose offer has waited longest, at least kStaleOfferUs; -1 when none.
  // Reads the atomics only, so may_pop() can call it without the mutex.
  int stale_offer(int core, double now) const {
    int oldest = -1;
    double since = now - kStaleOfferUs;
    for (int b = 0; b < cores(); ++b) {
      if (b == core || !offered_[static_cast<size_t>(b)].load(std::memory_order_acquire)) continue;
      const double t = offered_since_[static_cast<size_t>(b)].load(std::memory_order_relaxed);
      if (t <= since) oldest = b, since = t;
    }
    return oldest;
  }

  Offer take_offer(int b) {
    Offer o = std::move(offers_[static_cast<size_t>(b)]);
    offered_[static_cast<size_t>(b)].store(false, std::memory_order_release);
    offers_out_.fetch_sub(1, std::memory_order_relaxed);
    return o;
  }

  // The task offered to core `b` runs on `core` instead: the planner moves it, its Running record moves along.
  // `why`: the verbose line (printf format of b and how long it waited, µs). Called with the mutex held.
  Offer move_offer(int b, int core, double now, const char* why) {
    const double waited = now - offered_since_[static_cast<size_t>(b)].load(std::memory_order_relaxed);
    Offer o = take_offer(b);
    Running moved = std::move(running_[static_cast<size_t>(b)]);
    running_[static_cast<size_t>(b)] = Running{};
    planner_->finished(moved.id);
    planner_->place(moved.id, core, 1, o.predicted, now);
    moved.start = moved.placed = now;
    running_[static_cast<size_t>(core)] = std::move(moved);
    block_of_[static_cast<size_t>(core)] = core;
    if (policy_options().verbose_sched) {
      std::fprintf(stderr, "corun sched: core %d ", core);
      std::fprintf(stderr, why, b, waited);
      std::fprintf(stderr, "\n");
    }
    return o;
  }

  void pushed_locked(starpu_task* task, int caller_core) override {
    planner_->add_ready(corun_task(task, *planner_, shared_teams_, governor_.next_cap()));
    apply(starpu_timing_now(), caller_core);
  }

  // The measured time of a task starts when its first core starts it (after the team barrier), not when
  // it was pushed: wake-up latency is not interference. Only that core writes `start`, before its own
  // completion, and the last member reads it under the mutex after every member has finished.
  void started(int core) override {
    if (block_of_[static_cast<size_t>(core)] != core) return;
    running_[static_cast<size_t>(core)].start = starpu_timing_now();
    running_[static_cast<size_t>(core)].cpu_start = thread_cpu_us();
  }

  // The CPU clock is read here, before the mutex: CLOCK_THREAD_CPUTIME_ID is a system call, and the return
  // from one is where the kernel preempts a thread for another process waiting for its core. Read under the
  // mutex, beside a spin loop on one core, the worker there was preempted holding it every few tasks and the
  // other core waited for it for a whole time slice (the mutex held 1.2 s in all over 10 LSTM steps, 40 ms
  // under cpf).
  // Only the block's first core reads it (as in started()): a team's other members make no system call.
  bool finished_unlocked(int core) override {
    if (block_of_[static_cast<size_t>(core)] == core) cpu_end_[static_cast<size_t>(core)] = thread_cpu_us();
    return false;
  }

  void finished_locked(int core) override {
    Running& r = running_[static_cast<size_t>(block_of_[static_cast<size_t>(core)])];
    if (block_of_[static_cast<size_t>(core)] == core) r.cpu_us = cpu_end_[static_cast<size_t>(core)] - r.cpu_start;
    if (--r.members_left == 0) {
      const double now = starpu_timing_now();
      planner_->finished(r.id);
      observe(r, now);
      if (r.width == 1 && policy_options().cotenancy) measure_core(core, r, now);
      r.corunning_kinds.clear();
      steal_offer(core, now);
      apply(now, core);
    }
  }

  // `core` just went idle: it takes a task offered to a core no faster and not popped yet (the planner moves
  // it; its Running record moves along). Called with the mutex held, on `core`'s own worker.
  void steal_offer(int core, double now) {
    const std::vector<double>& slow = planner_->core_slowdowns();
    for (int b = 0; b < cores(); ++b) {
      if (!offered_[static_cast<size_t>(b)].load(std::memory_order_relaxed) ||
          !(slow[static_cast<size_t>(core)] <= slow[static_cast<size_t>(b)]))
        continue;
      Offer o = move_offer(b, core, now, "takes the task offered to busy core %d (offered %.0f us ago)");
      place(Placement{o.task, 0, core, 1, o.predicted, &o.reason});
      return;
    }
  }

  // Hands the planner's assignments to the workers. Called with the policy mutex held.
  // `preferred`: the core whose worker released the tasks (-1 for the application thread).
  void apply(double now, int preferred) {
    assignments_.clear();
    planner_->dispatch(now, assignments_, preferred);
    for (const CorunAssignment& a : assignments_) {
      auto* task = reinterpret_cast<starpu_task*>(a.id);
      const auto* h = static_cast<const TaskHint*>(task->sched_data);
      if (policy_options().verbose_sched)
        std::fprintf(stderr, "corun sched: %s (node %d) -> cores [%d,%d): %s\n", task->name ? task->name : "?",
                     h ? h->node : -1, a.first_core, a.first_core + a.width, a.reason.c_str());

      // Before the push: the block's first core writes `start` as soon as it runs the task.
      Running& r = running_[static_cast<size_t>(a.first_core)];
      r = Running{a.id, a.width, a.width, h ? h->kind : -1, a.predicted, now, now, 0.0, NAN, {}};
      for (Running& other : running_)  // both directions: either may be the one slowed down
        if (other.members_left > 0 && &other != &r) {
          other.corunning_kinds.push_back(r.kind);
          r.corunning_kinds.push_back(other.kind);
        }
      for (int c = a.first_core; c < a.first_core + a.width; ++c) block_of_[static_cast<size_t>(c)] = a.first_core;
      const size_t c = static_cast<size_t>(a.first_core);
      const bool pinned = h != nullptr && h->fixed_first >= 0;  // a tuning run or a frozen schedule: never moved
      if (a.width == 1 && a.thread == 0 && a.first_core != preferred && !pinned && policy_options().cotenancy) {
        offers_[c] = Offer{task, a.predicted, a.reason};  // see may_pop()
        offered_since_[c].store(now, std::memory_order_relaxed);
        offers_out_.fetch_add(1, std::memory_order_relaxed);
        offered_[c].store(true, std::memory_order_release);
        wake(a.first_core);  // a sleeping worker (blocking drivers: SimGrid) would never pop it
        continue;
      }
      place(Placement{task, 0, a.first_core, a.width, a.predicted, &a.reason});
    }
  }

  // Issue 21 item 7: a team that keeps waiting for a member whose core is busy elsewhere (another process)
  // narrows the teams of later tasks (sched/planner/co_tenancy.hpp); the toolbox measured it.
  void team_measured_locked(const TeamMeasure& m) override {
    if (governor_.observe(m)) width_cap_changed_locked("corun", governor_);
  }

  // Issue 21 item 7: a core another process uses runs our width-1 tasks slower than the others; the
  // planner then prefers quiet cores for every width. Measured from placement to end (core_speed.hpp). The factors are
  // recomputed every kSpeedEvery measured tasks (a median per core). Called with the mutex held.
  void measure_core(int core, const Running& r, double now) {
    if (!(r.predicted >= kMinObservedUs)) return;
    // From placement, not from the kernel start: a worker sharing its core with a busy process mostly
    // loses time before it starts a small task (it waits for a time slice), hardly while running it.
    speed_->observe(core, r.predicted, now - r.placed);
    if (++measured_ % kSpeedEvery != 0) return;
    std::vector<double> s = speed_->slowdowns();
    if (s == planner_->core_slowdowns()) return;
    if (policy_options().verbose_sched)
      for (size_t c = 0; c < s.size(); ++c)
        if (s[c] != planner_->core_slowdowns()[c])
          std::fprintf(stderr, "corun sched: core %zu runs %.2fx slower than the fastest core%s\n", c, s[c],
                       s[c] > 1.0 ? ": another process uses it; tasks go there only when they still finish first"
                                  : " (below the busy threshold: equal)");
    planner_->set_core_slowdowns(std::move(s));
  }

  // A finished task: did it run much slower than predicted, and than the machine's other ops? A task that
  // ran alone only feeds the detector's baseline. Called with the mutex held.
  void observe(const Running& r, double now) {
    if (r.kind < 0 || !(r.predicted >= kMinObservedUs)) return;
    // CPU time, not wall time: a thread the OS descheduled for another process (co-tenancy) ran no slower,
    // while two of our ops fighting over caches or memory bandwidth stall on the CPU. On the loaded 2-core
    // VM wall times blamed pairs for ~30 ms preemptions, forbade more of them every step, and the LSTM
    // step grew from 0.66 s to 1.4 s within three steps. Wall time when the CPU clock is unavailable.
    const double took = std::isnan(r.cpu_us) ? now - r.start : r.cpu_us;
    detector_.observe(CorunObservation{r.kind, r.predicted, took, r.corunning_kinds});
    for (const auto& [a, b] : detector_.pairs()) {
      if (planner_->forbidden(a, b)) continue;
      planner_->forbid_corun(a, b);
      if (policy_options().verbose_sched)
        std::fprintf(stderr, "corun sched: op kinds %d and %d slow each other down; no longer co-run\n", a, b);
    }
  }

  std::unique_ptr<CorunPlanner> planner_;  // created in start(), once the workers are known
  std::unique_ptr<CoreSpeed> speed_;       // per-core slowdowns of width-1 tasks (co-tenancy)
  std::vector<Offer> offers_;                     // per core: a task offered to it (late binding), under the mutex
  std::unique_ptr<std::atomic<bool>[]> offered_;  // per core: offers_ holds a task (may_pop reads it unlocked)
  std::unique_ptr<std::atomic<double>[]> offered_since_;  // per core: when that task was offered (µs)
  std::vector<double> cpu_end_;                   // per core: its thread's CPU time at its last task's end (µs);
                                                  // written and read by that core's worker only
  std::atomic<int> offers_out_{0};                // offers not yet popped or stolen (may_pop's fast path)
  unsigned long measured_ = 0;             // width-1 tasks fed to speed_
  bool shared_teams_ = false;              // one team per width (see the header comment)
  std::vector<int> block_of_;              // per core: first core of the block it runs for
  std::vector<Running> running_;           // per first core of a running block
  InterferenceDetector detector_{kSlowdown, kMinEvents, kMinShare, kBaselineWindow};
  std::vector<CorunAssignment> assignments_;  // scratch, reused under the mutex
  TeamWidthGovernor governor_{policy_options().cotenancy};
};

}  // namespace

starpu_sched_policy* corun_policy() {
  static starpu_sched_policy p = team_policy<CorunPolicy>("corun", kCorunDescription);
  return &p;
}

}  // namespace corun::sched
