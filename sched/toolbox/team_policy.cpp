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
  measure_teams_ = policy_options().cotenancy;
  if (measure_teams_) team_watch_.set_up(static_cast<int>(workers_.size()));
  nap_rule_ = IdleNapRule(policy_options().idle_naps);
  if (nap_rule_.mode() != IdleNaps::off) napper_.set_up(static_cast<int>(workers_.size()));
  idle_since_.assign(workers_.size(), starpu_timing_now());
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

// The wakes wake() asked for happen here, after the mutex is released (StarPU's rule: wake another worker
// outside your own lock). Inside it, the wake waits for that worker's sched mutex, which a polling worker
// holds in every pop_task, and a thread that waits in the kernel there may be preempted for another
// process while it holds our mutex, stalling every core for a time slice.
void TeamPolicy::unlock() {
  if (pending_wakes_.empty()) {
    STARPU_PTHREAD_MUTEX_UNLOCK(&mutex_);
    return;
  }
  thread_local std::vector<int> wakes;  // reused: no allocation once warm
  wakes.assign(pending_wakes_.begin(), pending_wakes_.end());
  pending_wakes_.clear();
  STARPU_PTHREAD_MUTEX_UNLOCK(&mutex_);
  for (int w : wakes) starpu_wake_worker_relax_light(w);
}

void TeamPolicy::width_cap_changed_locked(const char* policy, const TeamWidthGovernor& governor) {
  report_width_change(policy, governor.last_change(), policy_options().verbose_sched, policy_options().quiet);
  cores_shared_.store(governor.cap() != TeamWidthGovernor::kNoCap, std::memory_order_relaxed);
}

bool TeamPolicy::nap_if_idle(int core) {
  if (nap_rule_.mode() == IdleNaps::off) return false;
  const double idle_us = starpu_timing_now() - idle_since_[static_cast<size_t>(core)];
  const double us = nap_rule_.nap_us(cores_shared_.load(std::memory_order_relaxed), idle_us);
  return us > 0 && napper_.nap(core, us);
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
  if (measure_teams_) {
    const auto* h = static_cast<const TaskHint*>(p.task->sched_data);
    // A width-search run measures a width for the first time in this process: its kernels are cold at that
    // width (oneDNN makes its primitives per thread and slice on first use), so its time against the model
    // is no evidence of a busy core. Only its start skew counts (a prediction of 0 is "unknown").
    team_watch_.placed(p.first_core, p.width, h != nullptr && h->width_search ? 0.0 : p.predicted,
                       h != nullptr && h->cold);
  }
  const int team = p.width > 1 ? team_for(p.first_core, p.width) : -1;
  push_to_workers(p.task, team, &workers_[static_cast<size_t>(p.first_core)], p.width,
                  &expected_[static_cast<size_t>(p.first_core)]);
  if (nap_rule_.mode() != IdleNaps::off)
    for (int c = p.first_core; c < p.first_core + p.width; ++c) napper_.wake(c);
}

starpu_task* TeamPolicy::hand_to_caller(const Placement& p) {
  if (p.width != 1) CORUN_ABORT("hand_to_caller: a team task (width " << p.width << ") must be placed");
  record(p);
  if (measure_teams_) team_watch_.placed(p.first_core, 1, p.predicted, false);
  expected_[static_cast<size_t>(p.first_core)] = p.task;
  starpu_push_task_end(p.task);
  return p.task;
}

void TeamPolicy::wake(int core) {
  pending_wakes_.push_back(workers_[static_cast<size_t>(core)]);
  if (nap_rule_.mode() != IdleNaps::off) napper_.wake(core);
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
  if (core < 0) return nullptr;
  // Nothing for this core: a nap on shared cores (idle_nap.hpp), then one more look (what woke it may be
  // an offer only its pop takes).
  if (!may_pop(core) && !(nap_if_idle(core) && may_pop(core))) return nullptr;
  lock();
  starpu_task* task = pop_locked(core);
  unlock();
  return task;
}

void TeamPolicy::pre_exec(starpu_task* task) {
  const int core = core_of(starpu_worker_get_id_check());
  if (core < 0 || expected_[static_cast<size_t>(core)] != task) return;
  if (measure_teams_) team_watch_.on_entry(core);
  started(core);
}

void TeamPolicy::post_exec(starpu_task* task) {
  const int core = core_of(starpu_worker_get_id_check());
  // Only what this core was given counts (a task StarPU ran on a specific worker bypassed the policy).
  if (core < 0 || expected_[static_cast<size_t>(core)] != task) return;
  expected_[static_cast<size_t>(core)] = nullptr;
  idle_since_[static_cast<size_t>(core)] = starpu_timing_now();
  TeamMeasure m;
  if (measure_teams_ && team_watch_.on_exit(core, m)) {  // the last member of a team: before the block is freed
    lock();
    team_measured_locked(m);
    unlock();
  }
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
  // Always: the team measurement needs it too, and PolicyOptions::cotenancy may be set after this struct
  // is built (it is read in add_workers). `watches_starts` only documents which policies use started().
  (void)watches_starts;
  p.pre_exec_hook = pre_exec_hook;
  p.post_exec_hook = post_exec_hook;
  p.policy_name = name;
  p.policy_description = description;
  p.worker_type = STARPU_WORKER_LIST;
  return p;
}

}  // namespace detail
}  // namespace corun::sched
