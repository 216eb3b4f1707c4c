// sched/corun/corun_policy.cpp — the StarPU adapter of the co-run planner (policy `corun`).
//
// Mechanism only; CorunPlanner decides which ready task starts, at which width, on which block of cores.
// The adapter
//   * orders its workers by hwloc binding and treats them as one row of cores: a team is any contiguous
//     block of that row (sched/toolbox/workers.hpp);
//   * creates the teams: one combined worker per contiguous block of width >= 2 when StarPU's worker id
//     space holds them all (cores*(cores-1)/2 of them: up to 21 cores with maxcpus 256), otherwise one per
//     width on the first cores, shared by every block of that width. For SPMD codelets (all of corun's) a
//     combined worker only gives the barrier its size and the perfmodel its arch {CPU, ncores = w}
//     (src/drivers/cpu/driver_cpu.c:208-233), so sharing is exact; a FORKJOIN codelet would be bound to
//     the wrong cores, so it runs on one core in that mode;
//   * pushes a task only to idle cores (all of its block), so every member's queue holds at most that
//     task: team tasks can never be queued in different orders on two members;
//   * on the last member's post_exec_hook, tells the planner the block is idle, feeds the measured time
//     of a task that co-ran into the interference detector (pairs of op kinds that slow each other down
//     are never co-run again), and dispatches again.
// Time is StarPU's clock (starpu_timing_now, µs), the unit of the engine's predictions.
#include "sched/corun/corun_policy.hpp"

#include "base/check.hpp"
#include "sched/hint.hpp"
#include "sched/layout.hpp"
#include "sched/planner/corun_planner.hpp"
#include "sched/planner/interference.hpp"
#include "sched/toolbox/workers.hpp"

#include <starpu.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

namespace corun::sched {
namespace {

// Interference: a co-run task this much slower than its model is a slowdown event; a pair of op kinds is
// no longer co-run after kMinEvents events that are at least kMinShare of its co-runs. On the shared 2-core
// VM, 1.5x with 2 events forbade 18 pairs in 10 LSTM steps from noise alone; 3 events and a majority
// forbid none there, while a pair that always interferes is caught after 3 co-runs.
constexpr double kSlowdown = 1.5;
constexpr int kMinEvents = 3;
constexpr double kMinShare = 0.5;
// Below this predicted time, wake-up latency and clock noise dominate the measurement: no verdict.
constexpr double kMinObservedUs = 100.0;

struct Running {
  uint64_t id = 0;
  int width = 0;
  int members_left = 0;
  int kind = -1;
  double predicted = NAN;
  double start = 0.0;                // kernel start (pre_exec_hook of the block's first core)
  std::vector<int> corunning_kinds;  // kinds that ran at the same time, at any moment of its run
};

struct CorunState {
  starpu_pthread_mutex_t mutex;
  std::unique_ptr<CorunPlanner> planner;  // created in add_workers, once the workers are known
  std::vector<int> workers;               // basic worker ids in core order
  std::vector<int> worker_slot;           // worker id -> core index (-1: not ours)
  std::map<std::pair<int, int>, int> team_id;  // (first core, width) -> combined worker id
  bool shared_teams = false;              // one team per width (see the header comment)
  std::vector<starpu_task*> expected;     // per core: the task or alias it was given
  std::vector<int> block_of;              // per core: first core of the block it runs for
  std::vector<Running> running;           // per first core of a running block
  InterferenceDetector detector{kSlowdown, kMinEvents, kMinShare};
  std::vector<CorunAssignment> assignments;  // scratch, reused under the mutex
};

CorunState* state_of(unsigned ctx) { return static_cast<CorunState*>(starpu_sched_ctx_get_policy_data(ctx)); }

void init(unsigned ctx) {
  auto* s = new CorunState{};
  STARPU_PTHREAD_MUTEX_INIT(&s->mutex, nullptr);
  starpu_sched_ctx_set_policy_data(ctx, s);
}

void deinit(unsigned ctx) {
  CorunState* s = state_of(ctx);
  STARPU_PTHREAD_MUTEX_DESTROY(&s->mutex);
  delete s;
}

void add_workers(unsigned ctx, int* ids, unsigned n) {
  CorunState* s = state_of(ctx);
  CORUN_CHECK(s->planner == nullptr, Status::runtime_error,
              "the corun policy supports one scheduling context with a fixed worker set");
  s->workers = ordered_cpu_workers(ids, n, "corun");
  const int cores = static_cast<int>(s->workers.size());
  s->planner = std::make_unique<CorunPlanner>(cores);
  s->worker_slot.assign(STARPU_NMAXWORKERS, -1);
  for (int c = 0; c < cores; ++c) s->worker_slot[static_cast<size_t>(s->workers[static_cast<size_t>(c)])] = c;
  s->expected.assign(static_cast<size_t>(cores), nullptr);
  s->block_of.assign(static_cast<size_t>(cores), -1);
  s->running.assign(static_cast<size_t>(cores), Running{});

  const int blocks = cores * (cores - 1) / 2;
  const int room = std::min(STARPU_NMAXWORKERS - static_cast<int>(starpu_worker_get_count()), STARPU_MAXCPUS);
  s->shared_teams = blocks > room;
  for (int w = 2; w <= cores; ++w)
    for (int first = 0; first + w <= cores && (first == 0 || !s->shared_teams); ++first) {
      std::vector<int> members(s->workers.begin() + first, s->workers.begin() + first + w);
      s->team_id[{first, w}] = create_team(members, "the corun policy's teams");
    }
  set_effective_layout(ExecutorLayout{1, cores}, s->workers);
}

int team_for(const CorunState* s, int first, int width) {
  return s->team_id.at({s->shared_teams ? 0 : first, width});
}

CorunTask corun_task(starpu_task* task, const CorunState* s) {
  CorunTask t;
  t.id = reinterpret_cast<uint64_t>(task);
  const starpu_codelet* cl = task->cl;
  const bool parallel = cl->type == STARPU_SPMD || (cl->type == STARPU_FORKJOIN && !s->shared_teams);
  int max_width = parallel ? std::max(1, cl->max_parallelism) : 1;
  const auto* h = static_cast<const TaskHint*>(task->sched_data);
  if (h != nullptr) {
    t.level = h->level_us;
    if (h->max_width > 0) max_width = std::min(max_width, h->max_width);
    t.predicted.assign(h->predicted_us, h->predicted_us + std::max(0, h->npredicted));
    t.kind = h->kind;
  }
  t.explain = policy_options().verbose_sched || (h != nullptr && h->want_reason);
  t.max_width = std::min(max_width, s->planner->cores());
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
    t.fixed_first = h->fixed_first >= 0 && h->fixed_first + t.fixed_width <= s->planner->cores() ? h->fixed_first : -1;
  }
  return t;
}

// Hands the planner's assignments to the workers. Called with the policy mutex held.
// `preferred`: the calling worker's core (-1 for the application thread): what it just released reads
// what it just wrote.
void apply(CorunState* s, double now, int preferred) {
  s->assignments.clear();
  s->planner->dispatch(now, s->assignments, preferred);
  for (const CorunAssignment& a : s->assignments) {
    auto* task = reinterpret_cast<starpu_task*>(a.id);
    auto* h = static_cast<TaskHint*>(task->sched_data);
    if (h != nullptr) {
      h->placed_executor = 0;
      h->placed_first_core = a.first_core;
      h->placed_width = a.width;
      if (h->want_reason) h->placed_reason = a.reason;
    }
    if (policy_options().verbose_sched)
      std::fprintf(stderr, "corun sched: %s (node %d) -> cores [%d,%d): %s\n", task->name ? task->name : "?",
                   h ? h->node : -1, a.first_core, a.first_core + a.width, a.reason.c_str());
    task->predicted = std::isnan(a.predicted) ? 0.0 : a.predicted;

    Running& r = s->running[static_cast<size_t>(a.first_core)];
    r = Running{a.id, a.width, a.width, h ? h->kind : -1, a.predicted, now, {}};
    for (Running& other : s->running)  // both directions: either may be the one slowed down
      if (other.members_left > 0 && &other != &r) {
        other.corunning_kinds.push_back(r.kind);
        r.corunning_kinds.push_back(other.kind);
      }
    for (int c = a.first_core; c < a.first_core + a.width; ++c) s->block_of[static_cast<size_t>(c)] = a.first_core;
    const int team = a.width > 1 ? team_for(s, a.first_core, a.width) : -1;
    push_to_workers(task, team, &s->workers[static_cast<size_t>(a.first_core)], a.width,
                    &s->expected[static_cast<size_t>(a.first_core)]);
  }
}

void lock(CorunState* s) {
  starpu_worker_relax_on();
  STARPU_PTHREAD_MUTEX_LOCK(&s->mutex);
  starpu_worker_relax_off();
}

int push_task(starpu_task* task) {
  CorunState* s = state_of(task->sched_ctx);
  lock(s);
  s->planner->add_ready(corun_task(task, s));
  const int worker = starpu_worker_get_id();
  apply(s, starpu_timing_now(), worker >= 0 ? s->worker_slot[static_cast<size_t>(worker)] : -1);
  STARPU_PTHREAD_MUTEX_UNLOCK(&s->mutex);
  return 0;
}

// Every task reaches its workers' local queues in push_task or post_exec_hook; there is nothing to pop.
starpu_task* pop_task(unsigned) { return nullptr; }

// A finished task that co-ran: did it run much slower than predicted? Called with the mutex held.
void observe(CorunState* s, const Running& r, double now) {
  if (r.kind < 0 || r.corunning_kinds.empty() || !(r.predicted >= kMinObservedUs)) return;
  s->detector.observe(CorunObservation{r.kind, r.predicted, now - r.start, r.corunning_kinds});
  for (const auto& [a, b] : s->detector.pairs()) {
    if (s->planner->forbidden(a, b)) continue;
    s->planner->forbid_corun(a, b);
    if (policy_options().verbose_sched)
      std::fprintf(stderr, "corun sched: op kinds %d and %d slow each other down; no longer co-run\n", a, b);
  }
}

// The measured time of a task starts when its first core starts it (after the team barrier), not when
// it was pushed: wake-up latency is not interference. Only that core writes `start`, before its own
// post_exec_hook, and the last member reads it under the mutex after every member has finished.
void pre_exec_hook(starpu_task* task, unsigned ctx) {
  CorunState* s = state_of(ctx);
  const int slot = s->worker_slot[static_cast<size_t>(starpu_worker_get_id_check())];
  if (slot < 0 || s->expected[static_cast<size_t>(slot)] != task || s->block_of[static_cast<size_t>(slot)] != slot) return;
  s->running[static_cast<size_t>(slot)].start = starpu_timing_now();
}

void post_exec_hook(starpu_task* task, unsigned ctx) {
  CorunState* s = state_of(ctx);
  const int worker = starpu_worker_get_id_check();
  const int slot = s->worker_slot[static_cast<size_t>(worker)];
  // Only what this core was given counts (a task StarPU ran on a specific worker bypassed the policy).
  if (slot < 0 || s->expected[static_cast<size_t>(slot)] != task) return;
  lock(s);
  s->expected[static_cast<size_t>(slot)] = nullptr;
  Running& r = s->running[static_cast<size_t>(s->block_of[static_cast<size_t>(slot)])];
  if (--r.members_left == 0) {
    const double now = starpu_timing_now();
    s->planner->finished(r.id);
    observe(s, r, now);
    r.corunning_kinds.clear();
    apply(s, now, slot);
  }
  STARPU_PTHREAD_MUTEX_UNLOCK(&s->mutex);
}

}  // namespace

starpu_sched_policy* corun_policy() {
  static starpu_sched_policy p = [] {
    starpu_sched_policy q{};
    q.init_sched = init;
    q.deinit_sched = deinit;
    q.add_workers = add_workers;
    q.push_task = push_task;
    q.pop_task = pop_task;
    q.pre_exec_hook = pre_exec_hook;
    q.post_exec_hook = post_exec_hook;
    q.policy_name = "corun";
    q.policy_description = kCorunDescription;
    q.worker_type = STARPU_WORKER_LIST;
    return q;
  }();
  return &p;
}

}  // namespace corun::sched
