// The replicated SGD step (NUMA-Caffe; docs/numa.md): every replica's graph in its own scheduling context
// with its tensors homed on its domain, the gradients summed along the plan's fixed tree, the update at the
// root and the new parameters copied back to every replica. Over several processes (engine/cross_ranks.hpp)
// the roots' sums are then added along the rank tree and the total comes back to every rank, which applies
// the same update.
#include "engine/cross_ranks.hpp"
#include "engine/engine_impl.hpp"
#include "engine/simulated_models.hpp"

#include "base/check.hpp"
#include "codelets/adam/adam.hpp"
#include "codelets/sgd_momentum/sgd_momentum.hpp"
#include "codelets/sgd_wd/sgd_wd.hpp"
#include "codelets/starpu/codelets.hpp"
#include "numa/pages.hpp"

#include <atomic>
#include <cmath>
#include <deque>
#include <string>
#include <unordered_map>

namespace corun {

namespace {
// Where each task really ran, counted in its callback on the worker that ran it (the master of a team). Its
// reads are remote when a buffer's home is not that worker's memory node; a task that ran on a worker outside
// its replica's scheduling context would break the replica's NUMA locality, so it is counted too (tests
// require none). The task is still alive in its callback; its context is task->sched_ctx.
struct ReplicaAccounting {
  std::atomic<uint64_t> remote{0};
  std::atomic<int> outside{0};
};
ReplicaAccounting g_replica;
void count_replica_task(void* arg) {
  const auto* task = static_cast<const starpu_task*>(arg);
  const int w = starpu_worker_get_id();
  if (w < 0) return;  // not run by a worker (no codelet): nothing read
  if (!starpu_sched_ctx_contains_worker(w, task->sched_ctx)) ++g_replica.outside;
  g_replica.remote += static_cast<uint64_t>(
      engine::remote_read_bytes(task, static_cast<int>(starpu_worker_get_memory_node(static_cast<unsigned>(w)))));
}
}  // namespace

// One run_replicated call: its checked inputs, the replicas' bindings and the step's jobs in the order they
// run (bind, reduce, update, account). The tasks point at the engine's sync calls, so these are made before
// anything is submitted and live in the Impl, not here.
struct Engine::Impl::ReplicaStep {
  Impl& im;
  const std::vector<Graph*>& replicas;
  size_t n = 0;                                     // replicas, one per NUMA place
  std::vector<std::vector<Tensor>> params, grads;   // per replica, in replica 0's parameter order
  std::vector<Tensor> velocities;                   // momentum without a hyper tensor: the root's velocities
  // Adam / AdamW / SGD with weight decay or Nesterov (issue 19): the root's hyper-parameter tensor, which the
  // caller wrote for this step (the rate and bias corrections), and its state per parameter.
  Tensor hyper;
  bool hyper_mode = false;
  bool adam = false;
  const BackwardOptions* hyper_options = nullptr;
  std::vector<std::vector<Tensor>> hyper_state;  // per parameter: {m, v} or {velocity}
  std::vector<Bound*> bound;
  RunStats stats;
  double t0 = 0.0;
  uint64_t run = 0;  // ObservedTask::run of the step's tasks
  std::deque<engine::TaskObservers::Record> own_observed;  // the step's own tasks while observed (stable addresses)

  ReplicaStep(Impl& impl, const std::vector<Graph*>& graphs) : im(impl), replicas(graphs), n(impl.places.size()) {}

  void check_arguments(float learning_rate, float momentum) const;
  void collect_parameters();
  void collect_hyper_state();
  void collect_velocities(float momentum);
  void bind();
  bool make_sync_calls();
  void set_rates(float learning_rate, float momentum, size_t total);
  void allocate_mean_grads(bool sync_calls_kept, float momentum);
  void submit(starpu_task* task, size_t r, int node = -1);
  void submit_graphs();
  void reduce(engine::CrossRanks* ranks, bool across_ranks);
  void update(float momentum);
  void copy_parameters_back();
  void account(engine::CrossRanks* ranks, bool across_ranks);

  size_t param_count() const { return params[0].size(); }
  int64_t numel_of(size_t k) const {
    return replicas[0]->impl().values[static_cast<size_t>(params[0][k].id())].shape.numel();
  }
  starpu_data_handle_t handle(size_t r, Tensor t) const { return bound[r]->handles[static_cast<size_t>(t.id())]; }
};

void Engine::Impl::ReplicaStep::check_arguments(float learning_rate, float momentum) const {
  CORUN_CHECK(replicas.size() == n, Status::invalid_argument,
              "Engine::run_replicated: got " << replicas.size() << " graphs for the " << n << " replicas of NUMA "
                                             << numa::describe(im.numa_plan)
                                             << "; build one graph per replica (Engine::info().replicas)");
  CORUN_CHECK(std::isfinite(learning_rate) && learning_rate > 0.0f, Status::invalid_argument,
              "Engine::run_replicated: the learning rate must be a positive number, got " << learning_rate);
  CORUN_CHECK(std::isfinite(momentum) && momentum >= 0.0f && momentum < 1.0f, Status::invalid_argument,
              "Engine::run_replicated: the momentum must be in [0, 1), got " << momentum);
  CORUN_CHECK(!im.tracing, Status::invalid_config, "Engine::run_replicated: tracing replicated runs is not supported");
  CORUN_CHECK(im.policy.traits.replicated_runs, Status::invalid_config,
              "Engine::run_replicated: the " << im.info.policy
                                             << " policy keeps a state per graph (its width search runs on one "
                                                "graph); choose another CORUN_SCHED for replicas");
}

// Every replica: distinct graph, no SGD nodes, the same parameters as replica 0, each with a gradient.
void Engine::Impl::ReplicaStep::collect_parameters() {
  using codelets::OpKind;
  params.assign(n, {});
  grads.assign(n, {});
  for (size_t r = 0; r < n; ++r) {
    Graph& g = *replicas[r];
    for (size_t q = 0; q < r; ++q)
      CORUN_CHECK(
          replicas[q] != &g, Status::invalid_argument,
          "Engine::run_replicated: replicas " << q << " and " << r << " are the same graph; build one per replica");
    for (const auto& node : g.impl().nodes)
      CORUN_CHECK(node.call.kind != OpKind::sgd && node.call.kind != OpKind::sgd_momentum &&
                      node.call.kind != OpKind::adam && node.call.kind != OpKind::sgd_wd,
                  Status::invalid_argument,
                  "Engine::run_replicated: replica " << r << " has SGD update nodes ('" << node.name
                                                     << "'); build it with backward(loss, {.sgd_update = false}): the "
                                                        "update is applied once, after the gradients are summed");
    params[r] = g.params();
    CORUN_CHECK(!params[r].empty(), Status::invalid_argument,
                "Engine::run_replicated: replica " << r << " has no parameter");
    CORUN_CHECK(params[r].size() == params[0].size(), Status::invalid_argument,
                "Engine::run_replicated: replica " << r << " has " << params[r].size() << " parameters, replica 0 has "
                                                   << params[0].size());
    for (size_t k = 0; k < params[r].size(); ++k) {
      const auto& v = g.impl().values[static_cast<size_t>(params[r][k].id())];
      const auto& v0 = replicas[0]->impl().values[static_cast<size_t>(params[0][k].id())];
      CORUN_CHECK(v.name == v0.name && v.shape == v0.shape, Status::invalid_argument,
                  "Engine::run_replicated: parameter " << k << " of replica " << r << " is '" << v.name << "' "
                                                       << v.shape.str() << ", replica 0 has '" << v0.name << "' "
                                                       << v0.shape.str() << "; build every replica the same way");
      grads[r].push_back(g.grad(params[r][k]));
      CORUN_CHECK(grads[r][k].valid(), Status::invalid_argument,
                  "Engine::run_replicated: parameter '" << v.name << "' of replica " << r
                                                        << " has no gradient; call backward() on the replica's loss");
    }
  }
}

// The root's optimizer state per parameter when replica 0 has a hyper-parameter tensor.
void Engine::Impl::ReplicaStep::collect_hyper_state() {
  hyper = replicas[0]->optimizer_hyper();
  hyper_mode = hyper.valid();
  hyper_options = &replicas[0]->impl().hyper_options;
  adam = hyper_mode && hyper_options->optimizer != Optimizer::sgd;
  if (!hyper_mode) return;
  std::unordered_map<std::string, Tensor> by_name;  // state values are not in the graph's name index
  for (Tensor t : replicas[0]->optimizer_state()) by_name.emplace(t.name(), t);
  for (Tensor p : params[0]) {
    std::vector<Tensor> s;
    for (const char* suffix : adam ? std::vector<const char*>{".adam_m", ".adam_v"} : std::vector<const char*>{".velocity"}) {
      const auto it = by_name.find(p.name() + suffix);
      CORUN_CHECK(it != by_name.end() && it->second.shape() == p.shape(), Status::invalid_argument,
                  "Engine::run_replicated: replica 0 has no optimizer state '"
                      << p.name() << suffix << "'; build it with backward(loss, {.sgd_update = false, ...}) and the "
                      << "same optimizer options as the other replicas");
      s.push_back(it->second);
    }
    hyper_state.push_back(std::move(s));
  }
}

// Momentum: the root's velocity of every parameter, by name (backward with sgd_update = false makes them).
void Engine::Impl::ReplicaStep::collect_velocities(float momentum) {
  if (!(momentum > 0.0f && !hyper_mode)) return;
  const auto& root = replicas[0]->impl();
  std::unordered_map<std::string, Tensor> state;
  for (Tensor t : replicas[0]->optimizer_state()) state.emplace(root.values[static_cast<size_t>(t.id())].name, t);
  for (Tensor p : params[0]) {
    const auto& pv = root.values[static_cast<size_t>(p.id())];
    auto it = state.find(pv.name + ".velocity");
    CORUN_CHECK(it != state.end() && root.values[static_cast<size_t>(it->second.id())].shape == pv.shape,
                Status::invalid_argument,
                "Engine::run_replicated: momentum " << momentum << " needs the velocity '" << pv.name
                                                    << ".velocity' in replica 0; build it with backward(loss, "
                                                       "{.sgd_update = false, .momentum = m})");
    velocities.push_back(it->second);
  }
}

// Each replica's values as handles on its domain's memory node.
void Engine::Impl::ReplicaStep::bind() {
  bound.assign(n, nullptr);
  for (size_t r = 0; r < n; ++r) {
    bound[r] = &im.bind(*replicas[r], im.places[r].memory_node);
    // Once per binding, on a real machine whose replicas span several domains: the pages of the replica's
    // buffers go to its domain (they were first touched by the thread that built the graph).
    if (!bound[r]->pages_placed && im.numa_plan.spans_several_domains() && im.numa_plan.real_topology &&
        numa::machine_has_node(im.places[r].home_os_index))
      for (const auto& v : replicas[r]->impl().values)
        if (!v.fused_away)
          numa::move_to_node(v.data.get(), static_cast<size_t>(v.shape.numel()) * sizeof(float),
                             im.places[r].home_os_index);
    bound[r]->pages_placed = true;
  }
}

// The engine's own calls depend on the parameters' sizes only: made again when they change. Returns whether
// the previous calls were kept.
bool Engine::Impl::ReplicaStep::make_sync_calls() {
  using codelets::Access;
  using codelets::OpKind;
  const size_t np = param_count();
  bool same = im.sync_calls.size() == np;
  for (size_t k = 0; same && k < np; ++k) same = im.sync_calls[k].add_child.shapes[0].numel() == numel_of(k);
  if (same) return true;
  im.sync_calls.assign(np, Impl::SyncCalls{});
  for (size_t k = 0; k < np; ++k) {
    const int64_t numel = numel_of(k);
    const Shape flat({numel});
    Impl::SyncCalls& c = im.sync_calls[k];
    c.add_child.kind = OpKind::sgd;
    c.add_child.shapes = {flat, flat};
    c.add_child.modes = {Access::readwrite, Access::read};
    c.add_child.f = -1.0f;
    c.update = c.add_child;
    c.mean.kind = OpKind::sum;  // Y = f * X summed over a dimension of extent 1: an exact scaling
    c.mean.shapes = {Shape({numel, 1}), flat};
    c.mean.modes = {Access::read, Access::write};
    c.mean.i = {1, 0, 0, 0};
    c.momentum.kind = OpKind::sgd_momentum;
    c.momentum.shapes = {flat, flat, flat};
    c.momentum.modes = {Access::readwrite, Access::readwrite, Access::read};
    if (hyper_mode) {
      const BackwardOptions& o = *hyper_options;
      c.hyper_update.kind = adam ? OpKind::adam : OpKind::sgd_wd;
      c.hyper_update.shapes.assign(adam ? 4 : 3, flat);
      c.hyper_update.shapes.push_back(Shape({codelets::kHyperCount}));
      c.hyper_update.modes.assign(adam ? 3 : 2, Access::readwrite);
      c.hyper_update.modes.insert(c.hyper_update.modes.end(), {Access::read, Access::read});
      c.hyper_update.i = adam ? codelets::adam_encode({o.beta1, o.beta2, o.eps, o.weight_decay,
                                                       o.optimizer == Optimizer::adamw})
                              : codelets::sgd_wd_encode(o.momentum, o.weight_decay, o.nesterov);
    }
    c.copy.kind = OpKind::slice;
    c.copy.shapes = {flat, flat};
    c.copy.modes = {Access::read, Access::write};
    c.copy.i = {0, 0, numel, 0};
  }
  return false;
}

// The loss of each replica is a mean over its rows, so the gradients sum to `replicas` times the whole
// batch's mean gradient: dividing by their count (`total`, over every rank) keeps the one-solver update
// (exactly when that count is a power of two).
void Engine::Impl::ReplicaStep::set_rates(float learning_rate, float momentum, size_t total) {
  for (size_t k = 0; k < param_count(); ++k) {
    Impl::SyncCalls& c = im.sync_calls[k];
    c.update.f = learning_rate / static_cast<float>(total);
    c.mean.f = 1.0f / static_cast<float>(total);
    c.momentum.f = learning_rate;
    c.momentum.i[0] = codelets::sgd_momentum_encode(momentum);
  }
}

// The mean gradients live at the root, allocated once (and again only when the parameters change).
void Engine::Impl::ReplicaStep::allocate_mean_grads(bool sync_calls_kept, float momentum) {
  const size_t np = param_count();
  const bool mean_ok = im.mean_grad_handles.size() == np && sync_calls_kept &&
                       (np == 0 || starpu_data_get_home_node(im.mean_grad_handles[0]) == im.places[0].memory_node);
  if (!(momentum > 0.0f || hyper_mode) || mean_ok) return;
  im.drop_mean_grads();
  for (size_t k = 0; k < np; ++k) {
    im.mean_grads.emplace_back(new float[static_cast<size_t>(numel_of(k))]());
    starpu_data_handle_t h = nullptr;
    starpu_vector_data_register(&h, im.places[0].memory_node, reinterpret_cast<uintptr_t>(im.mean_grads.back().get()),
                                static_cast<uint32_t>(numel_of(k)), sizeof(float));
    im.mean_grad_handles.push_back(h);
  }
}

// A task in replica r's scheduling context, counted where it runs (count_replica_task): replica r's node
// `node`, or (-1) one of the step's own tasks. Observers see it with the step's run number.
void Engine::Impl::ReplicaStep::submit(starpu_task* task, size_t r, int node) {
  task->sched_ctx = im.places[r].ctx;
  task->callback_func = count_replica_task;
  task->callback_arg = task;
  if (!im.observers.empty())
    im.observers.watch(task, node >= 0 ? bound[r]->observed[static_cast<size_t>(node)] : own_observed.emplace_back(),
                       node, run);
  const std::string name = task->name ? task->name : "?";
  const int ret = starpu_task_submit(task);
  if (ret != 0) {
    starpu_task_destroy(task);
    starpu_task_wait_for_all();
    detail::fail(Status::runtime_error, "submitting '" + name + "' of replica " + std::to_string(r) +
                                            " failed: " + engine::submit_error(ret));
  }
  ++stats.tasks;
}

// Every replica's forward and backward tasks, planned as one solver's.
void Engine::Impl::ReplicaStep::submit_graphs() {
  // Simulated: an op without a model would abort inside StarPU at its first task; refuse before any replica's.
  for (size_t r = 0; r < n && im.info.simulated; ++r)
    if (bound[r]->runs == 0)
      engine::refuse_unmodelled_ops(replicas[r]->impl().nodes, im.info.policy, im.policy.traits.teams, im.info.workers);
  for (size_t r = 0; r < n; ++r) {
    const auto& g = replicas[r]->impl();
    Impl::Bound& b = *bound[r];
    im.tasks.assign(g.nodes.size(), nullptr);
    for (size_t i = 0; i < g.nodes.size(); ++i) im.tasks[i] = engine::make_task(g.nodes[i], b.handles);
    if (im.planner) {
      im.planner->plan(g, im.tasks, b.plan, nullptr);
      for (auto& h : b.plan.hints) h.cold = b.runs == 0;
      for (size_t i = 0; i < g.nodes.size(); ++i) im.tasks[i]->sched_data = &b.plan.hints[i];
    }
    if (b.runs == 0 && !im.info.simulated && im.info.own_policy)  // cold: no model samples (engine/submit.cpp)
      for (size_t i = 0; i < g.nodes.size(); ++i) im.tasks[i]->cl = codelets::unmodelled_codelet(g.nodes[i].call.kind);
    if (!im.observers.empty()) b.observed.resize(g.nodes.size());
    for (size_t i = 0; i < im.tasks.size(); ++i) {
      try {
        submit(im.tasks[i], r, static_cast<int>(i));
      } catch (...) {  // the tasks not submitted yet are still ours to free
        for (size_t j = i + 1; j < im.tasks.size(); ++j) starpu_task_destroy(im.tasks[j]);
        throw;
      }
    }
  }
}

// The gradients summed along the plan's tree into the root's, then across ranks.
void Engine::Impl::ReplicaStep::reduce(engine::CrossRanks* ranks, bool across_ranks) {
  const size_t np = param_count();
  // Bottom-up: a replica's children have larger indices, so their own sums are submitted before theirs.
  for (size_t r = n; r-- > 0;)
    for (int c : im.numa_plan.replicas[r].children)
      for (size_t k = 0; k < np; ++k)
        submit(engine::make_call_task(im.sync_calls[k].add_child,
                                      {handle(r, grads[r][k]), handle(static_cast<size_t>(c), grads[c][k])},
                                      "replica_grad_sum"),
               r);
  // Across ranks: every rank's root sum joins the rank tree; afterwards each root holds the same total.
  if (across_ranks) {
    std::vector<starpu_data_handle_t> sums(np);
    for (size_t k = 0; k < np; ++k) sums[k] = handle(0, grads[0][k]);
    ranks->submit_allreduce(sums, [&](size_t k, starpu_data_handle_t received) {
      submit(engine::make_call_task(im.sync_calls[k].add_child, {sums[k], received}, "rank_grad_sum"), 0);
    });
  }
}

// The optimizer's update of the root's parameters from the summed gradients.
void Engine::Impl::ReplicaStep::update(float momentum) {
  for (size_t k = 0; k < param_count(); ++k) {
    if (hyper_mode) {
      submit(engine::make_call_task(im.sync_calls[k].mean, {handle(0, grads[0][k]), im.mean_grad_handles[k]},
                                    "replica_grad_mean"),
             0);
      const std::vector<Tensor>& st = hyper_state[k];
      const starpu_data_handle_t w = handle(0, params[0][k]), mean = im.mean_grad_handles[k], h = handle(0, hyper);
      submit(adam ? engine::make_call_task(im.sync_calls[k].hyper_update, {w, handle(0, st[0]), handle(0, st[1]), mean, h},
                                           "replica_update")
                  : engine::make_call_task(im.sync_calls[k].hyper_update, {w, handle(0, st[0]), mean, h}, "replica_update"),
             0);
    } else if (momentum > 0.0f) {
      submit(engine::make_call_task(im.sync_calls[k].mean, {handle(0, grads[0][k]), im.mean_grad_handles[k]},
                                    "replica_grad_mean"),
             0);
      submit(engine::make_call_task(im.sync_calls[k].momentum,
                                    {handle(0, params[0][k]), handle(0, velocities[k]), im.mean_grad_handles[k]},
                                    "replica_update"),
             0);
    } else {
      submit(engine::make_call_task(im.sync_calls[k].update, {handle(0, params[0][k]), handle(0, grads[0][k])},
                                    "replica_update"),
             0);
    }
  }
}

// The root's new parameters copied to every other replica.
void Engine::Impl::ReplicaStep::copy_parameters_back() {
  for (size_t r = 1; r < n; ++r)
    for (size_t k = 0; k < param_count(); ++k)
      submit(engine::make_call_task(im.sync_calls[k].copy, {handle(0, params[0][k]), handle(r, params[r][k])},
                                    "replica_param_copy"),
             r);
}

// Waits for the step, then fills its stats and counts the run.
void Engine::Impl::ReplicaStep::account(engine::CrossRanks* ranks, bool across_ranks) {
  if (across_ranks) {
    ranks->wait_all();  // the tasks and this rank's transfers (StarPU-MPI's requests are not tasks)
    stats.cross_rank_bytes = ranks->last_bytes_sent();
  } else {
    starpu_task_wait_for_all();
  }
  stats.wall_ms = (starpu_timing_now() - t0) / 1000.0;  // StarPU's clock: simulated time under SimGrid
  stats.remote_bytes = static_cast<double>(g_replica.remote.load());
  stats.tasks_outside_replica = g_replica.outside.load();
  ++im.runs;
  for (size_t r = 0; r < n; ++r) ++bound[r]->runs;
  const std::string err = codelets::take_kernel_error();
  CORUN_CHECK(err.empty(), Status::runtime_error, err);
}

RunStats Engine::run_replicated(const std::vector<Graph*>& replicas, float learning_rate, float momentum) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->wait_until_no_run_in_flight();
  Impl::ReplicaStep step(*impl_, replicas);
  step.check_arguments(learning_rate, momentum);
  step.collect_parameters();
  step.collect_hyper_state();
  step.collect_velocities(momentum);
  step.bind();
  const bool sync_calls_kept = step.make_sync_calls();
  engine::CrossRanks* ranks = engine::cross_ranks();
  const bool across_ranks = ranks != nullptr && ranks->size() > 1;
  step.set_rates(learning_rate, momentum, step.n * static_cast<size_t>(across_ranks ? ranks->size() : 1));
  step.allocate_mean_grads(sync_calls_kept, momentum);

  g_replica.remote = 0;
  g_replica.outside = 0;
  // StarPU's clock: the OS's monotonic clock natively, simulated time under SimGrid (corun simulate).
  step.t0 = starpu_timing_now();
  step.run = impl_->observers.next_run();
  step.submit_graphs();
  step.reduce(ranks, across_ranks);
  step.update(momentum);
  step.copy_parameters_back();
  step.account(ranks, across_ranks);
  return step.stats;
}

}  // namespace corun
