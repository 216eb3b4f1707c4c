// sched/cpf/cpf_policy.cpp — the StarPU adapter of the cpf planner (policies `cpf` and `fifo`).
//
// Mechanism only; every decision is CpfPlanner's. The adapter
//   * orders its workers by hwloc binding (so consecutive workers are topology neighbours), cuts them
//     into the executors of the requested layout and creates one combined worker per (executor, team
//     width > 1) itself (a custom policy gets no teams otherwise);
//   * on push_task, turns the task's TaskHint into a PlannerTask, lets the planner dispatch, and pushes
//     each assignment to its core(s) with starpu_push_local_task: a width-w task becomes w aliases, all
//     appended under the one policy mutex, so every member's queue sees team tasks in the same order (the
//     alias-ordering rule of the StarPU notes). An executor holds one task at a time, so a team starts
//     only when all its cores are free and no member waits at the barrier for another task;
//   * on post_exec_hook (each member runs it once per task), frees the executor when its last member is
//     done. A one-core executor does it without the policy mutex: it only raises its `waiting` flag, and
//     the next push_task (usually the successors StarPU releases right after the hook, from the same
//     worker) collects every waiting executor under its lock, then hands the highest-level ready task to
//     this idle, cache-warm executor first. If nothing is pushed, the worker's next pop_task collects
//     itself and takes the top of the heap. A wider executor is freed and dispatched under the mutex at
//     once (pop_task never pushes to other workers).
// pop_task costs one atomic load unless its executor is waiting: StarPU's non-blocking drivers call it in
// a loop while idle.
#include "sched/cpf/cpf_policy.hpp"

#include "base/check.hpp"
#include "sched/hint.hpp"
#include "sched/layout.hpp"
#include "sched/planner/cpf_planner.hpp"
#include "sched/toolbox/workers.hpp"

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

namespace corun::sched {
namespace {

struct CpfState {
  ReadyOrder order;
  starpu_pthread_mutex_t mutex;
  std::unique_ptr<CpfPlanner> planner;  // created in add_workers, once the workers are known
  std::vector<int> workers;             // basic worker ids in executor order (executor e owns [e*k, e*k+k))
  std::vector<int> worker_slot;         // worker id -> index in `workers` (-1: not ours)
  std::map<std::pair<int, int>, int> team_id;  // (first core index, width) -> combined worker id
  // Per core slot: the task (or alias) it was given; per executor: members that still have to finish.
  // Matching by pointer, never through the job: a member may run post_exec_hook after rank 0 freed it.
  std::vector<starpu_task*> expected;
  std::vector<int> members_left;
  // Per executor: finished, but not yet handed back to the planner (one-core executors only).
  std::unique_ptr<std::atomic<bool>[]> waiting;
  std::atomic<int> nwaiting{0};
  std::atomic<size_t> ready{0};  // planner's ready count, readable without the mutex
  std::vector<Assignment> assignments;  // scratch, reused under the mutex
};

CpfState* state_of(unsigned ctx) { return static_cast<CpfState*>(starpu_sched_ctx_get_policy_data(ctx)); }

void init_common(unsigned ctx, ReadyOrder order) {
  auto* s = new CpfState{};
  s->order = order;
  STARPU_PTHREAD_MUTEX_INIT(&s->mutex, nullptr);
  starpu_sched_ctx_set_policy_data(ctx, s);
}
void init_cpf(unsigned ctx) { init_common(ctx, ReadyOrder::level); }
void init_fifo(unsigned ctx) { init_common(ctx, ReadyOrder::arrival); }

void deinit(unsigned ctx) {
  CpfState* s = state_of(ctx);
  STARPU_PTHREAD_MUTEX_DESTROY(&s->mutex);
  delete s;
}

// Executors of `layout.width` consecutive workers; count 0 means as many as fit. A layout wider than the
// machine is clamped (with a warning), never an error: the profile of a bigger node may be reused.
ExecutorLayout fit_layout(ExecutorLayout want, int nworkers) {
  ExecutorLayout got = want;
  if (got.width > nworkers) got.width = nworkers;
  const int fit = nworkers / got.width;
  got.count = got.count == 0 ? fit : std::min(got.count, fit);
  if (!(got == want) && want.count != 0)
    std::fprintf(stderr, "corun: warning: executor layout %s does not fit %d workers; using %s\n", want.str().c_str(),
                 nworkers, got.str().c_str());
  return got;
}

void add_workers(unsigned ctx, int* ids, unsigned n) {
  CpfState* s = state_of(ctx);
  CORUN_CHECK(s->planner == nullptr, Status::runtime_error,
              "the cpf/fifo policies support one scheduling context with a fixed worker set");
  const std::vector<int> cpus = ordered_cpu_workers(ids, n, "cpf/fifo");
  const PolicyOptions& opt = policy_options();
  const ExecutorLayout layout = fit_layout(opt.layout, static_cast<int>(cpus.size()));
  s->planner = std::make_unique<CpfPlanner>(layout, s->order, opt.narrow_when_faster);
  s->workers.assign(cpus.begin(), cpus.begin() + layout.count * layout.width);
  s->worker_slot.assign(STARPU_NMAXWORKERS, -1);
  for (size_t i = 0; i < s->workers.size(); ++i) s->worker_slot[static_cast<size_t>(s->workers[i])] = static_cast<int>(i);
  s->expected.assign(s->workers.size(), nullptr);
  s->members_left.assign(static_cast<size_t>(layout.count), 0);
  s->waiting = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(layout.count));
  for (int e = 0; e < layout.count; ++e) s->waiting[static_cast<size_t>(e)] = false;

  // One team per executor and width > 1, on the executor's first w cores (the planner's convention).
  for (int e = 0; e < layout.count; ++e)
    for (int w : s->planner->team_widths()) {
      if (w == 1) continue;
      const int first = e * layout.width;
      std::vector<int> members(s->workers.begin() + first, s->workers.begin() + first + w);
      const int id = create_team(members, ("layout " + layout.str()).c_str());
      s->team_id[{first, w}] = id;
    }
  set_effective_layout(layout, s->workers);
}

PlannerTask planner_task(starpu_task* task, const CpfPlanner& planner) {
  PlannerTask p;
  p.id = reinterpret_cast<uint64_t>(task);
  const starpu_codelet* cl = task->cl;
  const bool parallel = cl->type == STARPU_SPMD || cl->type == STARPU_FORKJOIN;
  p.max_width = parallel ? std::max(1, cl->max_parallelism) : 1;
  if (const auto* h = static_cast<const TaskHint*>(task->sched_data)) {
    p.level = h->level_us;
    if (h->max_width > 0) p.max_width = std::min(p.max_width, h->max_width);
    p.fixed_width = h->fixed_width;
    if (h->npredicted > 0) {
      const auto& widths = planner.team_widths();
      p.predicted.resize(widths.size(), NAN);
      for (size_t i = 0; i < widths.size(); ++i)
        if (widths[i] <= h->npredicted) p.predicted[i] = h->predicted_us[widths[i] - 1];
    }
  }
  return p;
}

// Records an assignment on the task (for traces) and in the executor's bookkeeping; returns the task.
starpu_task* take(CpfState* s, const Assignment& a) {
  auto* task = reinterpret_cast<starpu_task*>(a.id);
  if (auto* h = static_cast<TaskHint*>(task->sched_data)) {
    h->placed_executor = a.executor;
    h->placed_first_core = a.first_core;
    h->placed_width = a.width;
  }
  task->predicted = std::isnan(a.predicted) ? 0.0 : a.predicted;
  s->members_left[static_cast<size_t>(a.executor)] = a.width;
  return task;
}

// Hands the planner's assignments to the workers (starpu_push_local_task wakes them). Called with the
// policy mutex held.
void apply(CpfState* s, int preferred) {
  s->assignments.clear();
  s->planner->dispatch(s->assignments, preferred);
  for (const Assignment& a : s->assignments) {
    starpu_task* task = take(s, a);
    const int team = a.width > 1 ? s->team_id.at({a.first_core, a.width}) : -1;
    push_to_workers(task, team, &s->workers[static_cast<size_t>(a.first_core)], a.width,
                    &s->expected[static_cast<size_t>(a.first_core)]);
  }
}

void lock(CpfState* s) {
  starpu_worker_relax_on();
  STARPU_PTHREAD_MUTEX_LOCK(&s->mutex);
  starpu_worker_relax_off();
}

// The executor of the calling worker, -1 for the application thread or a worker that is not ours.
int my_executor(const CpfState* s) {
  const int worker = starpu_worker_get_id();
  if (worker < 0) return -1;
  const int slot = s->worker_slot[static_cast<size_t>(worker)];
  return slot < 0 ? -1 : slot / s->planner->layout().width;
}

// Hands one waiting executor back to the planner; true if it was waiting. Called with the mutex held.
bool collect(CpfState* s, int e) {
  if (!s->waiting[static_cast<size_t>(e)].exchange(false, std::memory_order_acq_rel)) return false;
  s->nwaiting.fetch_sub(1, std::memory_order_relaxed);
  s->planner->finished(e);
  return true;
}

void collect_all(CpfState* s) {
  if (s->nwaiting.load(std::memory_order_acquire) == 0) return;
  for (int e = 0; e < s->planner->layout().count; ++e) collect(s, e);
}

int push_task(starpu_task* task) {
  CpfState* s = state_of(task->sched_ctx);
  lock(s);
  s->planner->add_ready(planner_task(task, *s->planner));
  collect_all(s);
  apply(s, my_executor(s));
  s->ready.store(s->planner->ready_count(), std::memory_order_release);
  STARPU_PTHREAD_MUTEX_UNLOCK(&s->mutex);
  return 0;
}

// Called with the worker's sched mutex held, so it must not push to its own local list: it returns the
// task instead (and never pushes to other workers, whose locks it would take while holding its own).
starpu_task* pop_task(unsigned ctx) {
  CpfState* s = state_of(ctx);
  const int e = my_executor(s);
  // Nothing ready: stay waiting (a later push hands this idle executor its task) and take no lock.
  if (e < 0 || !s->waiting[static_cast<size_t>(e)].load(std::memory_order_acquire) ||
      s->ready.load(std::memory_order_acquire) == 0)
    return nullptr;
  lock(s);
  starpu_task* task = nullptr;
  Assignment a;
  // Someone else may have collected this executor (and maybe pushed it a task) since the check above.
  if (collect(s, e) && s->planner->dispatch_to(e, a)) {
    task = take(s, a);
    s->expected[static_cast<size_t>(a.first_core)] = task;
    starpu_push_task_end(task);
  }
  s->ready.store(s->planner->ready_count(), std::memory_order_release);
  STARPU_PTHREAD_MUTEX_UNLOCK(&s->mutex);
  return task;
}

void post_exec_hook(starpu_task* task, unsigned ctx) {
  CpfState* s = state_of(ctx);
  const int worker = starpu_worker_get_id_check();
  const int slot = s->worker_slot[static_cast<size_t>(worker)];
  // Only what this core was given counts (a task StarPU ran on a specific worker bypassed the policy).
  // `expected[slot]` was written under the mutex before the task reached this worker's queue, and nobody
  // writes it again until the executor is collected: reading it here needs no lock.
  if (slot < 0 || s->expected[static_cast<size_t>(slot)] != task) return;
  s->expected[static_cast<size_t>(slot)] = nullptr;
  const int e = slot / s->planner->layout().width;
  if (s->planner->layout().width == 1) {
    s->nwaiting.fetch_add(1, std::memory_order_relaxed);
    s->waiting[static_cast<size_t>(e)].store(true, std::memory_order_release);  // see the header comment
    return;
  }
  lock(s);
  if (--s->members_left[static_cast<size_t>(e)] == 0) {
    s->planner->finished(e);
    apply(s, e);
    s->ready.store(s->planner->ready_count(), std::memory_order_release);
  }
  STARPU_PTHREAD_MUTEX_UNLOCK(&s->mutex);
}

starpu_sched_policy make_policy(const char* name, const char* description, void (*init)(unsigned)) {
  starpu_sched_policy p{};
  p.init_sched = init;
  p.deinit_sched = deinit;
  p.add_workers = add_workers;
  p.push_task = push_task;
  p.pop_task = pop_task;
  p.post_exec_hook = post_exec_hook;
  p.policy_name = name;
  p.policy_description = description;
  p.worker_type = STARPU_WORKER_LIST;
  return p;
}

}  // namespace

starpu_sched_policy* cpf_policy() {
  static starpu_sched_policy p = make_policy("cpf", kCpfDescription, init_cpf);
  return &p;
}

starpu_sched_policy* fifo_policy() {
  static starpu_sched_policy p = make_policy("fifo", kFifoDescription, init_fifo);
  return &p;
}

}  // namespace corun::sched
