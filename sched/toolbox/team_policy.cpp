#include "sched/toolbox/team_policy.hpp"

#include "base/check.hpp"
#include "sched/hint.hpp"
#include "sched/toolbox/workers.hpp"

namespace corun::sched {

TeamPolicy::TeamPolicy(const char* name, const char* one_context_error)
    : name_(name), one_context_error_(one_context_error) {
  STARPU_PTHREAD_MUTEX_INIT(&mutex_, nullptr);
}

TeamPolicy::~TeamPolicy() {
  STARPU_PTHREAD_MUTEX_DESTROY(&mutex_);
}

void TeamPolicy::add_workers(const int* ids, unsigned n) {
  CORUN_CHECK(!started_, Status::runtime_error, one_context_error_);
  started_ = true;
  const std::vector<int> cpus = ordered_cpu_workers(ids, n, name_);
  const ExecutorLayout layout = start(static_cast<int>(cpus.size()));
  workers_.assign(cpus.begin(), cpus.begin() + layout.count * layout.width);
  worker_core_.assign(STARPU_NMAXWORKERS, -1);
  for (size_t c = 0; c < workers_.size(); ++c) worker_core_[static_cast<size_t>(workers_[c])] = static_cast<int>(c);
  expected_.assign(workers_.size(), nullptr);
  create_teams();
  set_effective_layout(layout, workers_);
}

void TeamPolicy::add_team(int first, int width, const char* context) {
  std::vector<int> members(workers_.begin() + first, workers_.begin() + first + width);
  team_id_[{first, width}] = create_team(members, context);
}

int TeamPolicy::team_for(int first, int width) const {
  return team_id_.at({shared_teams_ ? 0 : first, width});
}

// Relaxed while it waits: StarPU requires it before a worker blocks on a mutex other than its own sched
// mutex, so that other threads may observe and change the worker's state meanwhile (no deadlock with a
// thread that holds our mutex and wakes this worker).
void TeamPolicy::lock() {
  starpu_worker_relax_on();
  STARPU_PTHREAD_MUTEX_LOCK(&mutex_);
  starpu_worker_relax_off();
}

void TeamPolicy::unlock() {
  STARPU_PTHREAD_MUTEX_UNLOCK(&mutex_);
}

void TeamPolicy::record(const Placement& p) const {
  if (auto* h = static_cast<TaskHint*>(p.task->sched_data)) {
    h->placed_executor = p.executor;
    h->placed_first_core = p.first_core;
    h->placed_width = p.width;
    if (p.reason != nullptr && h->want_reason) h->placed_reason = *p.reason;
  }
  p.task->predicted = std::isnan(p.predicted) ? 0.0 : p.predicted;
}

void TeamPolicy::place(const Placement& p) {
  record(p);
  const int team = p.width > 1 ? team_for(p.first_core, p.width) : -1;
  push_to_workers(p.task, team, &workers_[static_cast<size_t>(p.first_core)], p.width,
                  &expected_[static_cast<size_t>(p.first_core)]);
}

starpu_task* TeamPolicy::hand_to_caller(const Placement& p) {
  if (p.width != 1) CORUN_ABORT("hand_to_caller: a team task (width " << p.width << ") must be placed");
  record(p);
  expected_[static_cast<size_t>(p.first_core)] = p.task;
  starpu_push_task_end(p.task);
  return p.task;
}

void TeamPolicy::push(starpu_task* task) {
  lock();
  pushed_locked(task, core_of(starpu_worker_get_id()));
  unlock();
}

// Called with the worker's sched mutex held, so the policy must not push to its own local list (it returns
// the task instead) nor to other workers (whose locks it would take while holding its own).
starpu_task* TeamPolicy::pop() {
  const int core = core_of(starpu_worker_get_id());
  if (core < 0 || !may_pop(core)) return nullptr;
  lock();
  starpu_task* task = pop_locked(core);
  unlock();
  return task;
}

void TeamPolicy::pre_exec(starpu_task* task) {
  const int core = core_of(starpu_worker_get_id_check());
  if (core < 0 || expected_[static_cast<size_t>(core)] != task) return;
  started(core);
}

void TeamPolicy::post_exec(starpu_task* task) {
  const int core = core_of(starpu_worker_get_id_check());
  // Only what this core was given counts (a task StarPU ran on a specific worker bypassed the policy).
  if (core < 0 || expected_[static_cast<size_t>(core)] != task) return;
  expected_[static_cast<size_t>(core)] = nullptr;
  if (finished_unlocked(core)) return;
  lock();
  finished_locked(core);
  unlock();
}

namespace detail {
namespace {

TeamPolicy* policy_of(unsigned ctx) {
  return static_cast<TeamPolicy*>(starpu_sched_ctx_get_policy_data(ctx));
}

void deinit(unsigned ctx) {
  delete policy_of(ctx);
}
void add_workers(unsigned ctx, int* ids, unsigned n) {
  policy_of(ctx)->add_workers(ids, n);
}
int push_task(starpu_task* task) {
  policy_of(task->sched_ctx)->push(task);
  return 0;
}
starpu_task* pop_task(unsigned ctx) {
  return policy_of(ctx)->pop();
}
void pre_exec_hook(starpu_task* task, unsigned ctx) {
  policy_of(ctx)->pre_exec(task);
}
void post_exec_hook(starpu_task* task, unsigned ctx) {
  policy_of(ctx)->post_exec(task);
}

}  // namespace

void attach(unsigned ctx, std::unique_ptr<TeamPolicy> policy) {
  starpu_sched_ctx_set_policy_data(ctx, policy.release());
}

starpu_sched_policy policy_struct(const char* name, const char* description, void (*init)(unsigned),
                                  bool watches_starts) {
  starpu_sched_policy p{};
  p.init_sched = init;
  p.deinit_sched = deinit;
  p.add_workers = add_workers;
  p.push_task = push_task;
  p.pop_task = pop_task;
  if (watches_starts) p.pre_exec_hook = pre_exec_hook;
  p.post_exec_hook = post_exec_hook;
  p.policy_name = name;
  p.policy_description = description;
  p.worker_type = STARPU_WORKER_LIST;
  return p;
}

}  // namespace detail
}  // namespace corun::sched
