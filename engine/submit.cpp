// One graph, one run: a StarPU task per node, the plan (hints, the corun policy's width search, the lower
// bound), the NUMA accounting of one solver, submission in node order and the wait for all.
#include "engine/engine_impl.hpp"
#include "engine/preflight.hpp"

#include "base/check.hpp"
#include "codelets/starpu/codelets.hpp"
#include "numa/pages.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace corun {

namespace engine {

starpu_data_access_mode to_starpu(codelets::Access a) {
  switch (a) {
    case codelets::Access::read:
      return STARPU_R;
    case codelets::Access::write:
      return STARPU_W;
    case codelets::Access::readwrite:
      return STARPU_RW;
  }
  return STARPU_R;
}

starpu_task* make_task(const detail::Node& node, const std::vector<starpu_data_handle_t>& handles) {
  const auto& call = node.call;
  const int n = call.nbuffers();
  starpu_task* task = starpu_task_create();
  task->cl = codelets::codelet(call.kind);
  task->cl_arg = const_cast<codelets::OpCall*>(&call);
  task->cl_arg_size = 0;
  task->name = node.name.c_str();
  task->nbuffers = n;
  if (n > STARPU_NMAXBUFS) {  // freed by StarPU with the task
    task->dyn_handles = static_cast<starpu_data_handle_t*>(std::malloc(sizeof(starpu_data_handle_t) * n));
    task->dyn_modes = static_cast<starpu_data_access_mode*>(std::malloc(sizeof(starpu_data_access_mode) * n));
  }
  for (int b = 0; b < n; ++b) {
    STARPU_TASK_SET_HANDLE(task, handles[static_cast<size_t>(node.buffers[static_cast<size_t>(b)])], b);
    STARPU_TASK_SET_MODE(task, to_starpu(call.modes[static_cast<size_t>(b)]), b);
  }
  return task;
}

starpu_task* make_call_task(const codelets::OpCall& call, std::initializer_list<starpu_data_handle_t> handles,
                            const char* name) {
  starpu_task* task = starpu_task_create();
  task->cl = codelets::codelet(call.kind);
  task->cl_arg = const_cast<codelets::OpCall*>(&call);
  task->cl_arg_size = 0;
  task->name = name;
  task->nbuffers = static_cast<int>(handles.size());
  int b = 0;
  for (starpu_data_handle_t h : handles) {
    STARPU_TASK_SET_HANDLE(task, h, b);
    STARPU_TASK_SET_MODE(task, to_starpu(call.modes[static_cast<size_t>(b)]), b);
    ++b;
  }
  return task;
}

std::string submit_error(int ret) {
  return ret == -ENODEV ? "no worker can run it" : std::strerror(-ret);
}

}  // namespace engine

namespace {
// One solver over several NUMA domains, CORUN_NUMA=off: every tensor lives where the main thread first touched
// it, so a task's reads are remote when the worker that ran it is on another domain. Counted in the task's
// callback, on that worker (one Engine per process, so one set of counters).
struct OffAccounting {
  const std::vector<int>* worker_domain = nullptr;  // by StarPU worker id
  int home = 0;                                     // the main thread's domain
  std::atomic<uint64_t> remote{0};
};
OffAccounting g_off;
void count_remote_reads(void* arg) {
  const int w = starpu_worker_get_id();
  if (w >= 0 && (*g_off.worker_domain)[static_cast<size_t>(w)] != g_off.home)
    g_off.remote += *static_cast<const uint64_t*>(arg);
}
}  // namespace

RunStats Engine::run(Graph& graph) {
  CORUN_CHECK(impl_->places.size() == 1, Status::invalid_config,
              "Engine::run runs one solver, but NUMA "
                  << numa::describe(impl_->numa_plan)
                  << " asks for replicas: build one graph per replica and call Engine::run_replicated (as corun "
                     "train does), or unset CORUN_REPLICAS and set CORUN_NUMA=off");
  return run_solver(graph);
}

RunStats Engine::run_on_root(Graph& graph) {
  return run_solver(graph);
}

// A task per node, planned: the policy's tuner (made again when the graph changed), the hints and the lower
// bound. Returns whether this run tunes (measures every task for the policy's search).
bool Engine::Impl::make_planned_tasks(const detail::GraphImpl& g, Bound& b, RunStats& stats) {
  const auto& nodes = g.nodes;
  if (policy.make_tuner != nullptr && (!b.tuner || b.plan.nodes != nodes.size()))
    b.tuner = policy.make_tuner(engine::tuner_nodes(g), engine::tuner_settings(config, info.workers, info.simulated, info.machine_key));
  // Create every task first: the models are queried through them, and the levels need the whole graph.
  tasks.assign(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) tasks[i] = engine::make_task(nodes[i], b.handles);
  bool tuning = false;
  if (planner) {
    planner->plan(g, tasks, b.plan, b.tuner.get());
    if (b.tuner) {
      sched::TunerPlan view{b.plan.hints, b.plan.deps.successors, b.plan.uncalibrated};
      view.calibrated = b.plan.calibrated.data();
      view.calibrated_stride = b.plan.max_width;
      b.tuner->apply(view);
      b.plan.stale = b.plan.stale || view.stale;
      tuning = b.tuner->tuning();
      stats.frozen = b.tuner->frozen();
      for (auto& h : b.plan.hints) h.want_reason = tracing;
    }
    for (auto& h : b.plan.hints) h.cold = b.runs == 0;
    if (info.own_policy)
      for (size_t i = 0; i < nodes.size(); ++i) tasks[i]->sched_data = &b.plan.hints[i];
    stats.critical_path_ms = b.plan.critical_path_us / 1e3;
    stats.total_work_ms = b.plan.total_work_us / 1e3;
    stats.lower_bound_ms = b.plan.lower_bound_us / 1e3;
    stats.uncalibrated = b.plan.uncalibrated;
    stats.bound_cores = b.plan.cores;
  }
  // The graph's first run on this engine is cold (each kernel's first call on a thread): no model samples.
  // Under our policies only: StarPU's modular-prandom dereferences the model of every task it places.
  if (b.runs == 0 && !info.simulated && info.own_policy)
    for (size_t i = 0; i < nodes.size(); ++i) tasks[i]->cl = codelets::unmodelled_codelet(nodes[i].call.kind);
  return tuning;
}

// Remote bytes of one solver over several domains (docs/numa.md): interleaved pages make the expected
// share (D - 1) / D of every read remote; off counts the reads of tasks run on another domain's workers,
// in the tasks' callbacks here, or from the recorder after a recorded run (count_off_remote_reads).
void Engine::Impl::prepare_remote_reads(const detail::GraphImpl& g, Bound& b, const RemoteReads& reads,
                                        RunStats& stats) {
  const numa::Plan& plan = numa_plan;
  if (reads.several && plan.mode == numa::Mode::interleave && !b.pages_placed && plan.real_topology)
    for (const auto& v : g.values)
      if (!v.fused_away)
        numa::interleave(v.data.get(), static_cast<size_t>(v.shape.numel()) * sizeof(float), plan.interleave_nodes);
  b.pages_placed = true;
  if (!reads.several) return;
  const size_t n = g.nodes.size();
  task_reads.resize(n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += task_reads[i] = engine::read_bytes(tasks[i]);
  const double d = static_cast<double>(plan.domain_cpus.size());
  if (!reads.off_count) stats.remote_bytes = static_cast<double>(total) * (d - 1.0) / d;
  g_off.worker_domain = &worker_domain;
  g_off.home = home_domain;
  g_off.remote = 0;
  if (reads.off_count && !reads.recording)  // a recorded run has each task's worker in the recorder instead
    for (size_t i = 0; i < n; ++i) {
      tasks[i]->callback_func = count_remote_reads;
      tasks[i]->callback_arg = &task_reads[i];
    }
}

// After the run under CORUN_NUMA=off: the remote reads counted in the callbacks, or those of the recorded
// tasks whose first core is on another domain than the main thread's.
void Engine::Impl::count_off_remote_reads(size_t nodes, const RemoteReads& reads, RunStats& stats) const {
  if (reads.off_count && !reads.recording) stats.remote_bytes = static_cast<double>(g_off.remote.load());
  if (reads.off_count && reads.recording)
    for (size_t i = 0; i < nodes; ++i) {
      const auto& cores = recorder.tasks()[i].cores;
      if (!cores.empty() && worker_domain[static_cast<size_t>(cores[0])] != home_domain)
        stats.remote_bytes += static_cast<double>(task_reads[i]);
    }
}

// Submits the run's tasks in node order; on a refusal frees the ones not submitted and waits for the rest.
void Engine::Impl::submit_in_node_order(const std::vector<detail::Node>& nodes, RunStats& stats) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int ret = starpu_task_submit(tasks[i]);
    if (ret != 0) {
      for (size_t j = i; j < nodes.size(); ++j) starpu_task_destroy(tasks[j]);
      starpu_task_wait_for_all();
      detail::fail(Status::runtime_error,
                   "submitting node '" + nodes[i].name + "' failed: " + engine::submit_error(ret));
    }
    ++stats.tasks;
  }
}

RunStats Engine::run_solver(Graph& graph) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->wait_until_no_run_in_flight();
  return impl_->run_alone(graph);
}

RunStats Engine::Impl::run_alone(Graph& graph) {
  const bool replicated = places.size() > 1;
  Bound& b = bind(graph, replicated ? places[0].memory_node : -1);
  const auto& g = graph.impl();
  RunStats stats;
  // StarPU's clock: the OS's monotonic clock natively, simulated time under SimGrid (corun simulate).
  const double t0 = starpu_timing_now();
  const bool tuning = make_planned_tasks(g, b, stats);
  return finish_alone(g, b, stats, tuning, t0);
}

RunStats Engine::Impl::finish_alone(const detail::GraphImpl& g, Bound& b, RunStats& stats, bool tuning, double t0) {
  const auto& nodes = g.nodes;
  const bool replicated = places.size() > 1;
  if (replicated)  // a graph beside the replicas runs on the root's workers
    for (starpu_task* t : tasks) t->sched_ctx = places[0].ctx;
  RemoteReads reads;
  reads.several = !replicated && !worker_domain.empty();
  reads.off_count = reads.several && numa_plan.mode == numa::Mode::off;
  reads.recording = tracing || tuning;
  prepare_remote_reads(g, b, reads, stats);
  // A tuning run measures every task (StarPU profiling must be on before submission).
  if (tuning && !tracing) starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  if (tracing || tuning) recorder.begin_run(tasks);

  submit_in_node_order(nodes, stats);
  starpu_task_wait_for_all();
  stats.wall_ms = (starpu_timing_now() - t0) / 1000.0;
  info.combined_workers = starpu_combined_worker_get_count();
  if (tracing || tuning) recorder.end_run(g, b.plan, info.own_policy, runs);
  count_off_remote_reads(nodes.size(), reads, stats);
  if (tuning) {
    // A finished climb's curve fills predictions the models lack (width 2 of a signature StarPU has too few
    // samples of): replan at the next run, not after kRefreshRuns runs of predictions without it.
    if (b.tuner->record(recorder.tasks())) b.plan.stale = true;
    if (!tracing) starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
  }
  stats.tuning = tuning;
  ++runs;
  ++b.runs;
  const std::string err = codelets::take_kernel_error();
  CORUN_CHECK(err.empty(), Status::runtime_error, err);
  return stats;
}

}  // namespace corun
