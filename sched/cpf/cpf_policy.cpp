// sched/cpf/cpf_policy.cpp — the StarPU adapter of the cpf planner (policies `cpf` and `fifo`).
//
// Mechanism only; every decision is CpfPlanner's, and the mechanics common to our policies (lock, worker
// order, teams, pushing a placement to its workers) are the toolbox's (sched/toolbox/team_policy.hpp).
// This adapter
//   * cuts the ordered workers into the executors of the requested layout and creates one team per
//     (executor, team width > 1) on the executor's first cores (the planner's convention), and the teams of
//     merged executors from core 0 (a lone task on an idle machine, CpfPlanner's merge_when_alone);
//   * on push, turns the task's TaskHint into a PlannerTask, lets the planner dispatch, and places each
//     assignment: a width-w task becomes w aliases, all appended under the one policy mutex, so every
//     member's queue sees team tasks in the same order (the alias-ordering rule of the StarPU notes). An
//     executor holds one task at a time, so a team starts only when all its cores are free and no member
//     waits at the barrier for another task;
//   * on a finished task (each member reports once per task), frees the executor when its last member is
//     done. A one-core executor does it without the policy mutex: it only raises its `waiting` flag, and
//     the next push (usually the successors StarPU releases right after the hook, from the same worker)
//     collects every waiting executor under its lock, then hands the highest-level ready task to this
//     idle, cache-warm executor first. If nothing is pushed, the worker's next pop collects itself and
//     takes the top of the heap. A wider executor is freed and dispatched under the mutex at once (pop
//     never pushes to other workers).
// pop costs one atomic load unless its executor is waiting: StarPU's non-blocking drivers call it in a
// loop while idle.
#include "sched/cpf/cpf_policy.hpp"

#include "sched/hint.hpp"
#include "sched/layout.hpp"
#include "sched/planner/co_tenancy.hpp"
#include "sched/planner/cpf_planner.hpp"
#include "sched/toolbox/team_policy.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

namespace corun::sched {
namespace {

// Executors of `layout.width` consecutive workers (width 0: default_executor_width); count 0 means as many
// as fit. A layout wider than the
// machine is clamped (with a warning), never an error: the profile of a bigger node may be reused.
ExecutorLayout fit_layout(ExecutorLayout want, int nworkers) {
  if (want.width == 0) want.width = default_executor_width(nworkers);  // the default layout: sized here
  ExecutorLayout got = want;
  if (got.width > nworkers) got.width = nworkers;
  const int fit = nworkers / got.width;
  got.count = got.count == 0 ? fit : std::min(got.count, fit);
  if (!(got == want) && want.count != 0)
    std::fprintf(stderr, "corun: warning: executor layout %s does not fit %d workers; using %s\n", want.str().c_str(),
                 nworkers, got.str().c_str());
  return got;
}

// `width_cap`: the co-tenancy governor's widest allowed team (TeamWidthGovernor::kNoCap: none), for tasks
// without a fixed width.
PlannerTask planner_task(starpu_task* task, const CpfPlanner& planner, int width_cap) {
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
      auto predict = [h](const std::vector<int>& widths, std::vector<double>& out) {
        out.resize(widths.size(), NAN);
        for (size_t i = 0; i < widths.size(); ++i)
          if (widths[i] <= h->npredicted) out[i] = h->predicted_us[widths[i] - 1];
      };
      predict(planner.team_widths(), p.predicted);
      predict(planner.merged_widths(), p.predicted_merged);
    }
  }
  // A task that asks for an exact width (calibration, a frozen schedule, a test) keeps it.
  if (p.fixed_width == 0) p.max_width = std::min(p.max_width, width_cap);
  return p;
}

class CpfPolicy final : public TeamPolicy {
 public:
  explicit CpfPolicy(ReadyOrder order)
      : TeamPolicy("cpf/fifo", "the cpf/fifo policies support one scheduling context with a fixed worker set"),
        order_(order) {}

 private:
  ExecutorLayout start(int ncores) override {
    const PolicyOptions& opt = policy_options();
    const ExecutorLayout layout = fit_layout(opt.layout, ncores);
    // fifo stays the naive baseline: no merged teams.
    planner_ = std::make_unique<CpfPlanner>(layout, order_, opt.narrow_when_faster,
                                            order_ == ReadyOrder::level && opt.merge_when_alone);
    members_left_.assign(static_cast<size_t>(layout.count), 0);
    waiting_ = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(layout.count));
    for (int e = 0; e < layout.count; ++e) waiting_[static_cast<size_t>(e)] = false;
    return layout;
  }

  void create_teams() override {
    const ExecutorLayout& layout = planner_->layout();
    const std::string context = "layout " + layout.str();
    for (int e = 0; e < layout.count; ++e)
      for (int w : planner_->team_widths())
        if (w > 1) add_team(e * layout.width, w, context.c_str());
    for (int w : planner_->merged_widths()) add_team(0, w, (context + ", merged executors").c_str());
  }

  void pushed_locked(starpu_task* task, int caller_core) override {
    planner_->add_ready(planner_task(task, *planner_, governor_.next_cap()));
    collect_all();
    apply(executor_of(caller_core));
    ready_.store(planner_->ready_count(), std::memory_order_release);
  }

  // Nothing ready: stay waiting (a later push hands this idle executor its task) and take no lock.
  bool may_pop(int core) const override {
    return waiting_[static_cast<size_t>(executor_of(core))].load(std::memory_order_acquire) &&
           ready_.load(std::memory_order_acquire) != 0;
  }

  starpu_task* pop_locked(int core) override {
    const int e = executor_of(core);
    starpu_task* task = nullptr;
    Assignment a;
    // Someone else may have collected this executor (and maybe pushed it a task) since may_pop().
    if (collect(e) && planner_->dispatch_to(e, a)) task = hand_to_caller(placement(a));
    ready_.store(planner_->ready_count(), std::memory_order_release);
    return task;
  }

  bool finished_unlocked(int core) override {
    if (planner_->layout().width != 1) return false;
    nwaiting_.fetch_add(1, std::memory_order_relaxed);
    waiting_[static_cast<size_t>(executor_of(core))].store(true, std::memory_order_release);  // see the top
    return true;
  }

  void finished_locked(int core) override {
    const int e = executor_of(core);
    if (--members_left_[static_cast<size_t>(e)] == 0) {
      planner_->finished(e);
      apply(e);
      ready_.store(planner_->ready_count(), std::memory_order_release);
    }
  }

  // Issue 21 item 7: a team that keeps waiting for a member whose core is busy elsewhere narrows the
  // teams of later tasks (sched/planner/co_tenancy.hpp); the toolbox measured it.
  void team_measured_locked(const TeamMeasure& m) override {
    if (governor_.observe(m)) width_cap_changed_locked("cpf", governor_);
  }

  int executor_of(int core) const { return core < 0 ? -1 : core / planner_->layout().width; }

  // The executor's bookkeeping for an assignment, and what the toolbox records and pushes.
  Placement placement(const Assignment& a) {
    // A merged team (a lone task on an idle machine) spans whole executors: each frees itself when its own
    // members are done.
    const int w = planner_->layout().width;
    if (a.width <= w) members_left_[static_cast<size_t>(a.executor)] = a.width;
    else
      for (int e = a.executor; e < a.executor + a.width / w; ++e) members_left_[static_cast<size_t>(e)] = w;
    return Placement{reinterpret_cast<starpu_task*>(a.id), a.executor, a.first_core, a.width, a.predicted, nullptr};
  }

  // Hands the planner's assignments to the workers. Called with the policy mutex held.
  void apply(int preferred) {
    assignments_.clear();
    planner_->dispatch(assignments_, preferred);
    for (const Assignment& a : assignments_) place(placement(a));
  }

  // Hands one waiting executor back to the planner; true if it was waiting. Called with the mutex held.
  bool collect(int e) {
    if (!waiting_[static_cast<size_t>(e)].exchange(false, std::memory_order_acq_rel)) return false;
    nwaiting_.fetch_sub(1, std::memory_order_relaxed);
    planner_->finished(e);
    return true;
  }

  void collect_all() {
    if (nwaiting_.load(std::memory_order_acquire) == 0) return;
    for (int e = 0; e < planner_->layout().count; ++e) collect(e);
  }

  const ReadyOrder order_;
  std::unique_ptr<CpfPlanner> planner_;  // created in start(), once the workers are known
  // Per executor: members that still have to finish its task.
  std::vector<int> members_left_;
  // Per executor: finished, but not yet handed back to the planner (one-core executors only).
  std::unique_ptr<std::atomic<bool>[]> waiting_;
  std::atomic<int> nwaiting_{0};
  std::atomic<size_t> ready_{0};         // planner's ready count, readable without the mutex
  std::vector<Assignment> assignments_;  // scratch, reused under the mutex
  TeamWidthGovernor governor_{policy_options().cotenancy};
};

}  // namespace

starpu_sched_policy* cpf_policy() {
  static starpu_sched_policy p = team_policy<CpfPolicy, ReadyOrder::level>("cpf", kCpfDescription);
  return &p;
}

starpu_sched_policy* fifo_policy() {
  static starpu_sched_policy p = team_policy<CpfPolicy, ReadyOrder::arrival>("fifo", kFifoDescription);
  return &p;
}

}  // namespace corun::sched
