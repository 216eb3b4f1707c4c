// Engine::submit and Engine::wait: runs of several graphs in flight at once (the serving endpoint co-runs its
// batches this way). A submitted run's tasks count themselves down in their callbacks; the last one ends the
// run. Nothing here waits for all of StarPU's tasks (starpu_task_wait_for_all would wait for the other runs).
#include "engine/engine_impl.hpp"

#include "base/check.hpp"
#include "codelets/starpu/codelets.hpp"

#include <atomic>
#include <cmath>

namespace corun {

namespace {
// Added to every level of a priority run under corun's policies: they order ready tasks by level only (the
// longest predicted time to the graph's sink), so every task of the run ranks above every other run's.
constexpr double kPriorityLevelUs = 1e12;
}  // namespace

struct RunTicket::InFlight {
  std::atomic<size_t> remaining{0};  // tasks not ended yet
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  double t0 = 0.0, t_end = 0.0;  // StarPU's clock (µs)
  RunStats stats;
  bool finished_alone = false;  // run as run() does, before submit returned: stats are final
  // The engine's flight accounting (Engine::Impl), which the last task updates.
  std::mutex* flight_mu = nullptr;
  std::condition_variable* flight_cv = nullptr;
  int* in_flight = nullptr;
  bool* graph_running = nullptr;

  void wait_done() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [this] { return done; });
  }
};

namespace {

// The task callback of a submitted run: the last task ends the run. It takes the engine's flight lock, then
// the run's own, and touches nothing of the run after notifying (wait() may free it then).
void task_ended(void* arg) {
  auto* run = static_cast<RunTicket::InFlight*>(arg);
  if (run->remaining.fetch_sub(1) != 1) return;
  const double end = starpu_timing_now();
  {
    std::lock_guard<std::mutex> lock(*run->flight_mu);
    *run->graph_running = false;
    --*run->in_flight;
    run->flight_cv->notify_all();
  }
  std::lock_guard<std::mutex> lock(run->m);
  run->t_end = end;
  run->done = true;
  run->cv.notify_all();
}

}  // namespace

// Under corun's policies the hints carry the levels: a priority run's rank above every other's, and a
// run after a priority run gets the planned levels back. Under StarPU's policies, task->priority.
void Engine::Impl::set_priority(Bound& b, bool priority) {
  auto& hints = b.plan.hints;
  const auto& levels = b.plan.levels.level;
  if ((priority || b.prioritised) && levels.size() == hints.size())
    for (size_t i = 0; i < hints.size(); ++i) {
      const double level = levels[i];
      hints[i].level_us = priority ? (std::isnan(level) ? 0.0 : level) + kPriorityLevelUs : level;
    }
  b.prioritised = priority;
  if (priority)
    for (starpu_task* t : tasks) t->priority = STARPU_MAX_PRIO;
}

RunTicket::RunTicket(std::unique_ptr<InFlight> run) : run_(std::move(run)) {}

RunTicket::RunTicket(RunTicket&& other) noexcept : run_(std::move(other.run_)) {}

RunTicket::~RunTicket() {
  if (run_) run_->wait_done();
}

RunTicket& RunTicket::operator=(RunTicket&& other) noexcept {
  if (this != &other) {
    if (run_) run_->wait_done();
    run_ = std::move(other.run_);
  }
  return *this;
}

void Engine::Impl::wait_until_no_run_in_flight() {
  std::unique_lock<std::mutex> lock(flight_mu);
  flight_cv.wait(lock, [this] { return in_flight == 0; });
}

RunTicket Engine::submit(Graph& graph, const SubmitOptions& options) {
  Impl& im = *impl_;
  std::unique_lock<std::mutex> lock(im.mu);
  auto run = std::make_unique<RunTicket::InFlight>();
  // Runs that are measured or span several domains account for every task of the machine: alone.
  if (im.places.size() > 1 || im.tracing || !im.worker_domain.empty()) {
    im.wait_until_no_run_in_flight();
    run->stats = im.run_alone(graph);
    run->finished_alone = run->done = true;
    return RunTicket(std::move(run));
  }
  Impl::Bound& b = im.bind(graph);
  {
    std::lock_guard<std::mutex> flight(im.flight_mu);
    CORUN_CHECK(!b.running, Status::invalid_argument,
                "Engine::submit: this graph has a run in flight; wait() for it before submitting the graph again "
                "(or submit another graph)");
  }
  const auto& g = graph.impl();
  run->t0 = starpu_timing_now();
  const bool tuning = im.make_planned_tasks(g, b, run->stats);
  if (tuning) {  // the corun policy's width search measures each task: nothing else may run beside it
    im.wait_until_no_run_in_flight();
    run->stats = im.finish_alone(g, b, run->stats, tuning, run->t0);
    run->finished_alone = run->done = true;
    return RunTicket(std::move(run));
  }
  im.set_priority(b, options.priority);
  Impl::RemoteReads one_domain;
  im.prepare_remote_reads(g, b, one_domain, run->stats);
  run->remaining = g.nodes.size();
  run->flight_mu = &im.flight_mu;
  run->flight_cv = &im.flight_cv;
  run->in_flight = &im.in_flight;
  run->graph_running = &b.running;
  for (starpu_task* t : im.tasks) {
    t->callback_func = task_ended;
    t->callback_arg = run.get();
  }
  if (g.nodes.empty()) {
    run->t_end = run->t0;
    run->done = true;
    return RunTicket(std::move(run));
  }
  {
    std::lock_guard<std::mutex> flight(im.flight_mu);
    ++im.in_flight;
    b.running = true;
  }
  ++im.runs;
  ++b.runs;
  try {
    im.submit_in_node_order(g.nodes, b, im.observers.next_run(), run->stats);
  } catch (...) {  // it waited for every submitted task: none of this run's callbacks is left to end it
    std::lock_guard<std::mutex> flight(im.flight_mu);
    if (b.running) {
      b.running = false;
      --im.in_flight;
      im.flight_cv.notify_all();
    }
    throw;
  }
  return RunTicket(std::move(run));
}

RunStats Engine::wait(RunTicket& ticket) {
  CORUN_CHECK(ticket.valid(), Status::invalid_argument,
              "Engine::wait: the ticket holds no run (it was waited for already, moved from, or not made by "
              "Engine::submit)");
  std::unique_ptr<RunTicket::InFlight> run = std::move(ticket.run_);
  run->wait_done();
  RunStats stats = run->stats;
  if (run->finished_alone) return stats;  // checked for kernel errors when it ran
  stats.wall_ms = (run->t_end - run->t0) / 1000.0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->info.combined_workers = starpu_combined_worker_get_count();
  }
  const std::string err = codelets::take_kernel_error();
  CORUN_CHECK(err.empty(), Status::runtime_error, err);
  return stats;
}

}  // namespace corun
