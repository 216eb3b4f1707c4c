// Engine: StarPU lifetime, data registration and one submission of a graph per run().
#include <corun/engine.hpp>

#include <corun/machine.hpp>

#include "codelets/sgd_momentum/sgd_momentum.hpp"
#include "codelets/starpu/codelets.hpp"
#include "base/check.hpp"
#include "base/env.hpp"
#include "engine/allocation.hpp"
#include "engine/blas.hpp"
#include "engine/corun_tuning.hpp"
#include "engine/model_files.hpp"
#include "engine/replicas.hpp"
#include "engine/planning.hpp"
#include "engine/starpu_check.hpp"
#include "engine/trace_recorder.hpp"
#include "graphs/graph_impl.hpp"
#include "numa/pages.hpp"
#include "sched/layout.hpp"
#include "sched/profiler/profile_file.hpp"
#include "sched/registry.hpp"

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <initializer_list>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <sstream>
#include <unordered_map>

namespace corun {

namespace {
std::atomic<bool> g_engine_alive{false};

starpu_data_access_mode to_starpu(codelets::Access a) {
  switch (a) {
    case codelets::Access::read: return STARPU_R;
    case codelets::Access::write: return STARPU_W;
    case codelets::Access::readwrite: return STARPU_RW;
  }
  return STARPU_R;
}
// A sample more than this many percent off the mean counts as an error in StarPU's history models, and an
// entry with as many errors as samples is flushed (starpu-1.3-notes.md (c)). StarPU's default of 50 never
// lets µs-sized ops calibrate on a shared machine; the mean of noisy samples is what the planner needs.
constexpr const char* kHistoryMaxError = "1000";

// Sets the executor layout for our policies from CORUN_EXECUTORS or CORUN_PROFILE; returns where it came
// from. Both, and CORUN_FIXED_WIDTH, only mean something to corun's policies: with a built-in they are an
// error, not something to ignore silently in a batch job.
std::string configure_policy_options(const Config& config, bool own, const std::string& policy,
                                     const std::string& key) {
  const bool corun = policy == "corun";
  CORUN_CHECK(corun || (config.width_interval == 0 && !config.deterministic && config.schedule.empty() &&
                        !config.verbose_sched),
              Status::invalid_config,
              "CORUN_WIDTH_INTERVAL, CORUN_DETERMINISTIC, CORUN_SCHEDULE and CORUN_VERBOSE=sched apply to the corun "
              "policy, not to '" << policy << "'; unset them or choose CORUN_SCHED=corun");
  CORUN_CHECK(config.schedule.empty() || config.deterministic, Status::invalid_config,
              "CORUN_SCHEDULE is the frozen schedule of deterministic mode; set CORUN_DETERMINISTIC=1 too, or unset it");
  if (!own) {
    CORUN_CHECK(config.executors.empty() && config.profile.empty() && config.fixed_width == 0,
                Status::invalid_config,
                "CORUN_EXECUTORS, CORUN_PROFILE and CORUN_FIXED_WIDTH apply to corun's policies (cpf, fifo, corun), "
                "not to the StarPU built-in '" << policy << "'; unset them or choose CORUN_SCHED=cpf");
    sched::set_policy_options({});
    return "";
  }
  CORUN_CHECK(!corun || (config.executors.empty() && config.profile.empty()), Status::invalid_config,
              "CORUN_EXECUTORS and CORUN_PROFILE set the executor layout of cpf and fifo; the corun policy forms its "
              "teams per op from all cores: unset them");
  if (corun && config.deterministic && !config.schedule.empty()) engine::CorunTuning::check_schedule_file(config.schedule);
  sched::PolicyOptions opt;
  opt.verbose_sched = config.verbose_sched;
  opt.layout = {0, 1};  // one executor per core
  std::string source = "default";
  if (!config.profile.empty()) {
    const sched::Profile prof = sched::read_profile(config.profile);
    opt.layout = prof.layout;
    source = "CORUN_PROFILE";
    if (prof.machine_key != key && !config.quiet)
      std::fprintf(stderr,
                   "corun: warning: profile '%s' was made on machine %s (%s), this is %s: its layout may not suit; "
                   "rerun `corun profile` here\n",
                   config.profile.c_str(), prof.machine_key.c_str(), prof.cpu.c_str(), key.c_str());
  }
  if (!config.executors.empty()) {
    opt.layout = sched::parse_layout(config.executors, "CORUN_EXECUTORS");
    source = config.profile.empty() ? "CORUN_EXECUTORS" : "CORUN_EXECUTORS, over CORUN_PROFILE";
  }
  sched::set_policy_options(opt);
  return source;
}
// One StarPU task for a node (not submitted). Tasks are destroyed by StarPU once they complete.
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
// One solver over several NUMA domains, CORUN_NUMA=off: every tensor lives where the main thread first touched
// it, so a task's reads are remote when the worker that ran it is on another domain. Counted in the task's
// callback, on that worker (one Engine per process, so one set of counters).
struct OffAccounting {
  const std::vector<int>* worker_domain = nullptr;  // by StarPU worker id
  int home = 0;                                      // the main thread's domain
  std::atomic<uint64_t> remote{0};
};
OffAccounting g_off;
void count_remote_reads(void* arg) {
  const int w = starpu_worker_get_id();
  if (w >= 0 && (*g_off.worker_domain)[static_cast<size_t>(w)] != g_off.home)
    g_off.remote += *static_cast<const uint64_t*>(arg);
}

// run_replicated: where each task really ran, counted in its callback on the worker that ran it (the master of
// a team). Its reads are remote when a buffer's home is not that worker's memory node; a task that ran on a
// worker outside its replica's scheduling context would break the replica's NUMA locality, so it is counted too
// (tests require none). The task is still alive in its callback; its context is task->sched_ctx.
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

// One StarPU task for an engine-made call over `handles` (run_replicated's reductions, update and copies).
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
}  // namespace

Config Config::from_env() {
  Config c;
  if (auto v = env::get("CORUN_SCHED")) c.policy = *v;
  if (auto k = env::get_choice("CORUN_KERNELS", {"fast", "ref"})) c.ref_kernels = *k == "ref";
  if (auto q = env::get_bool("CORUN_QUIET")) c.quiet = *q;
  if (auto v = env::get("CORUN_EXECUTORS")) c.executors = *v;
  if (auto v = env::get("CORUN_PROFILE")) c.profile = *v;
  if (auto w = env::get_int("CORUN_FIXED_WIDTH", 1, 4096)) c.fixed_width = static_cast<int>(*w);
  if (auto x = env::get_int("CORUN_WIDTH_INTERVAL", 1, 4096)) c.width_interval = static_cast<int>(*x);
  if (auto d = env::get_bool("CORUN_DETERMINISTIC")) c.deterministic = *d;
  if (auto v = env::get("CORUN_SCHEDULE")) c.schedule = *v;
  if (auto v = env::get_choice("CORUN_VERBOSE", {"sched", "none"})) c.verbose_sched = *v == "sched";
  return c;
}

std::string EngineInfo::summary() const {
  std::ostringstream os;
  os << "policy=" << policy << " (" << (own_policy ? "corun" : "StarPU built-in") << ", from " << policy_source
     << ") workers=" << workers << " starpu=" << starpu_version << " (maxcpus " << starpu_maxcpus << ", maxnumanodes "
     << starpu_maxnumanodes << ") blas=" << blas << " core=" << blas_core << " blas_threads=" << blas_threads
     << " kernels=" << kernels;
  if (!layout.empty()) os << " executors=" << layout << " (" << layout_source << ")";
  if (replicas > 1) os << " replicas=" << replicas;
  return os.str();
}

struct Engine::Impl {
  EngineInfo info;
  Config config;
  std::unique_ptr<engine::Planner> planner;  // set when one of our policies runs (or tracing is on)
  bool tracing = false;
  engine::TraceRecorder recorder;
  std::vector<starpu_task*> tasks;  // scratch: the tasks of one run
  int runs = 0;

  numa::Plan numa_plan;                     // CORUN_NUMA / CORUN_REPLICAS, checked before starpu_init
  std::vector<engine::ReplicaPlace> places;  // one per replica: context, workers, home memory node
  // run_replicated's own calls per parameter (tasks point at them until they complete), made once per set of
  // graphs, and the root's buffers of the mean gradient (momentum only), registered on the root's node.
  struct SyncCalls {
    codelets::OpCall add_child;  // G_parent += G_child (sgd with f = -1: an exact addition)
    codelets::OpCall update;     // W -= lr / n * G_sum (plain SGD)
    codelets::OpCall mean;       // M = G_sum / n (momentum: the velocity accumulates the mean gradient)
    codelets::OpCall momentum;   // V = mu V + M; W -= lr V
    codelets::OpCall copy;       // W_replica = W_root
  };
  std::vector<SyncCalls> sync_calls;
  std::vector<int> worker_domain;  // one solver over several domains: each worker's domain (by worker id)
  std::vector<uint64_t> task_reads;  // scratch: bytes each task of a run reads
  std::vector<std::unique_ptr<float[]>> mean_grads;
  std::vector<starpu_data_handle_t> mean_grad_handles;

  void drop_mean_grads() {
    for (auto h : mean_grad_handles) starpu_data_unregister(h);
    mean_grad_handles.clear();
    mean_grads.clear();
  }

  struct Bound {
    int home = STARPU_MAIN_RAM;                  // memory node the handles are registered on
    bool pages_placed = false;                   // run_replicated moved the buffers' pages to the home domain
    std::vector<starpu_data_handle_t> handles;  // indexed by value id
    engine::GraphPlan plan;
    std::unique_ptr<engine::CorunTuning> corun;  // corun policy only: width search, frozen schedule
  };
  // Keyed by the graph's storage, which a move of the Graph object keeps.
  std::unordered_map<detail::GraphImpl*, Bound> bound;

  // `home`: the memory node to register on (run_replicated: the replica's domain); -1 keeps the graph's current
  // home (main RAM for a new binding). A bound graph asked for another home is unregistered first, which
  // returns its data to its buffers, then registered again there.
  Bound& bind(Graph& graph, int home = -1) {
    auto& g = graph.impl();
    if (home >= 0) {
      auto it = bound.find(&g);
      if (it != bound.end() && !it->second.handles.empty() && it->second.home != home) {
        unbind(g, it->second.handles);
        bound.erase(it);
      }
    }
    Bound& b = bound[&g];
    auto& handles = b.handles;
    if (handles.empty()) b.home = home >= 0 ? home : STARPU_MAIN_RAM;
    if (handles.empty() && !g.values.empty()) ++g.bound_engines;
    // Values added since the last run (e.g. after backward()) are registered too.
    for (size_t v = handles.size(); v < g.values.size(); ++v) {
      starpu_data_handle_t h = nullptr;
      if (g.values[v].fused_away) {  // no buffer and no task uses it: no handle
        handles.push_back(h);
        continue;
      }
      starpu_vector_data_register(&h, b.home, reinterpret_cast<uintptr_t>(g.values[v].data.get()),
                                  static_cast<uint32_t>(g.values[v].shape.numel()), sizeof(float));
      handles.push_back(h);
    }
    return b;
  }

  // Undoes bind(): unregisters the handles (data returns to the host buffers) and drops the binding.
  void unbind(detail::GraphImpl& g, std::vector<starpu_data_handle_t>& handles) {
    for (auto h : handles)
      if (h != nullptr) starpu_data_unregister(h);
    if (!handles.empty()) --g.bound_engines;  // bind() counted the graph only once it had handles
    handles.clear();
  }

  starpu_data_handle_t handle(Graph& graph, Tensor t, const char* what) {
    CORUN_CHECK(t.valid() && t.belongs_to(graph), Status::invalid_argument, what << ": the tensor is not from this graph");
    graph.impl().check_not_fused_away(t.id(), what);
    return bind(graph).handles[static_cast<size_t>(t.id())];
  }
};

Engine::Engine(const Config& config) : impl_(std::make_unique<Impl>()) {
  bool expected = false;
  CORUN_CHECK(g_engine_alive.compare_exchange_strong(expected, true), Status::invalid_config,
              "an Engine already exists in this process (StarPU is initialised once); destroy it first");
  try {
    const char* starpu_sched = std::getenv("STARPU_SCHED");
    auto policy = sched::resolve_policy(config.policy.c_str(), starpu_sched);
    if (policy.help) {
      std::fputs(sched::policy_help().c_str(), stdout);
      detail::fail(Status::invalid_config, "CORUN_SCHED=help: the policies are listed above; set CORUN_SCHED to one of them");
    }
    // STARPU_SCHED naming a built-in silently beats conf.sched_policy; it agrees with us here (checked by
    // the resolver), so drop it for our own policies. Set but empty, it counts as unset for corun, while
    // StarPU looks up the name "" and silently runs lws instead of conf.sched_policy_name
    // (src/core/sched_policy.c:197-209): drop it then too.
    if (policy.policy != nullptr || (starpu_sched != nullptr && *starpu_sched == '\0')) unsetenv("STARPU_SCHED");
    // Perfmodels are keyed by machine kind, not host name (STARPU_HOSTNAME names the model files).
    const std::string key = machine::machine_key();  // loads the hwloc topology: once per Engine
    std::string layout_source = configure_policy_options(config, policy.policy != nullptr, policy.name, key);
    impl_->config = config;

    if (std::getenv("STARPU_HOSTNAME") == nullptr) setenv("STARPU_HOSTNAME", key.c_str(), 1);
    if (policy.policy != nullptr && std::getenv("STARPU_HISTORY_MAX_ERROR") == nullptr)
      setenv("STARPU_HISTORY_MAX_ERROR", kHistoryMaxError, 1);
    engine::quarantine_corrupt_models(std::getenv("STARPU_HOSTNAME"), config.quiet);

    // CORUN_NUMA / CORUN_REPLICAS: checked strictly before StarPU starts (replicas.hpp).
    const machine::Allocation allocation = machine::allocation();
    impl_->numa_plan = engine::plan_numa(allocation.fake_topology ? std::vector<int>{} : allocation.usable,
                                         policy.name, config.quiet, config.replicate_by_default);

    blas::pin_single_thread();
    codelets::set_kernel_choice(config.ref_kernels ? codelets::KernelChoice::ref : codelets::KernelChoice::fast);

    starpu_conf conf;
    starpu_check(starpu_conf_init(&conf), "starpu_conf_init");
    if (policy.policy != nullptr) {
      conf.sched_policy = policy.policy;
    } else {
      conf.sched_policy_name = policy.name.c_str();
    }
    std::string workers_source = "Config::ncpus";
    if (config.ncpus >= 0) {
      conf.ncpus = config.ncpus;
      // Without this, a set STARPU_NCPU silently overrides conf.ncpus inside starpu_init. starpu_conf_init
      // already copied every other STARPU_* variable into conf, so only the fields set here change meaning.
      conf.precedence_over_environment_variables = 1;
    } else {
      workers_source = engine::apply_allocation(conf);  // one worker per allocated core, bound in the mask
    }
    conf.ncuda = 0;
    conf.nopencl = 0;
    starpu_check(starpu_init(&conf), "starpu_init");

    EngineInfo& i = impl_->info;
    i.policy = policy.name;
    i.policy_source = policy.source;
    i.own_policy = policy.policy != nullptr;
    i.workers = static_cast<int>(starpu_cpu_worker_get_count());
    i.workers_source = workers_source;
    i.combined_workers = starpu_combined_worker_get_count();
    int major = 0, minor = 0, release = 0;
    starpu_get_version(&major, &minor, &release);
    i.starpu_version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
    i.starpu_maxcpus = STARPU_MAXCPUS;
    i.starpu_maxnumanodes = STARPU_MAXNUMANODES;
    i.blas = blas::config_string();
    i.blas_core = blas::core_name();
    i.blas_threads = blas::threads();
    i.kernels = config.ref_kernels ? "ref" : "fast";
    i.machine_key = std::getenv("STARPU_HOSTNAME");
    if (i.own_policy) {
      const sched::ExecutorLayout layout = sched::effective_layout();
      i.layout = layout.str();
      i.layout_source = layout_source;
      impl_->planner = std::make_unique<engine::Planner>(layout, layout.width, config.fixed_width);
    }
    impl_->places = engine::place_replicas(impl_->numa_plan, policy.policy, policy.name);
    i.replicas = static_cast<int>(impl_->places.size());
    const numa::Plan& plan = impl_->numa_plan;
    i.numa_mode = numa::mode_name(plan.mode);
    if (impl_->places.size() == 1 && plan.domain_cpus.size() > 1) {  // off or interleave over several domains
      impl_->worker_domain = engine::worker_domains(plan, impl_->places[0]);
      g_off.worker_domain = &impl_->worker_domain;
      // Where Graph's buffers get first touched: the main thread's domain (a fake topology's CPUs are not
      // this machine's, so there it is the first domain).
      g_off.home = plan.real_topology ? engine::domain_of_cpu(plan, sched_getcpu()) : 0;
      i.numa_domains = static_cast<int>(plan.domain_cpus.size());
    } else if (impl_->places.size() > 1) {
      std::vector<int> homes;
      for (const auto& r : plan.replicas)
        if (std::find(homes.begin(), homes.end(), r.home_os_index) == homes.end()) homes.push_back(r.home_os_index);
      i.numa_domains = static_cast<int>(homes.size());
    }
    if (!config.quiet) std::fprintf(stderr, "corun: %s\n", i.summary().c_str());
  } catch (...) {
    g_engine_alive = false;
    throw;
  }
}

Engine::~Engine() {
  impl_->drop_mean_grads();
  for (auto& [graph, b] : impl_->bound) impl_->unbind(*graph, b.handles);
  impl_->bound.clear();
  starpu_shutdown();
  g_engine_alive = false;
}

int planned_replicas(const Config& config) {
  const machine::Allocation allocation = machine::allocation();
  return static_cast<int>(engine::plan_numa_only(allocation.fake_topology ? std::vector<int>{} : allocation.usable,
                                                 config.replicate_by_default)
                              .replicas.size());
}

RunStats Engine::run(Graph& graph) {
  CORUN_CHECK(impl_->places.size() == 1, Status::invalid_config,
              "Engine::run runs one solver, but NUMA " << numa::describe(impl_->numa_plan)
                  << " asks for replicas: build one graph per replica and call Engine::run_replicated (as corun "
                     "train does), or unset CORUN_REPLICAS and set CORUN_NUMA=off");
  return run_solver(graph);
}

RunStats Engine::run_on_root(Graph& graph) { return run_solver(graph); }

RunStats Engine::run_solver(Graph& graph) {
  Impl& im = *impl_;
  const bool replicated = im.places.size() > 1;
  Impl::Bound& b = im.bind(graph, replicated ? im.places[0].memory_node : -1);
  const auto& g = graph.impl();
  const auto& nodes = g.nodes;
  RunStats stats;
  const auto t0 = std::chrono::steady_clock::now();

  const bool corun = im.info.policy == "corun";
  if (corun && (!b.corun || b.plan.nodes != nodes.size())) {
    const int cores = im.info.workers;
    const int interval = im.config.width_interval > 0 ? im.config.width_interval : std::max(1, cores / 16);
    b.corun = std::make_unique<engine::CorunTuning>(g, cores, interval, im.config.fixed_width,
                                                    im.config.deterministic, im.config.schedule);
  }
  // Create every task first: the models are queried through them, and the levels need the whole graph.
  im.tasks.assign(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) im.tasks[i] = make_task(nodes[i], b.handles);
  bool tuning = false;
  if (im.planner) {
    im.planner->plan(g, im.tasks, b.plan, b.corun.get());
    if (b.corun) {
      b.corun->apply(b.plan);
      tuning = b.corun->tuning();
      stats.frozen = b.corun->frozen();
      for (auto& h : b.plan.hints) h.want_reason = im.tracing;
    }
    if (im.info.own_policy)
      for (size_t i = 0; i < nodes.size(); ++i) im.tasks[i]->sched_data = &b.plan.hints[i];
    stats.critical_path_ms = b.plan.critical_path_us / 1e3;
    stats.total_work_ms = b.plan.total_work_us / 1e3;
    stats.lower_bound_ms = b.plan.lower_bound_us / 1e3;
    stats.uncalibrated = b.plan.uncalibrated;
    stats.bound_cores = b.plan.cores;
  }
  if (replicated)  // a graph beside the replicas runs on the root's workers
    for (starpu_task* t : im.tasks) t->sched_ctx = im.places[0].ctx;
  // Remote bytes of one solver over several domains (docs/numa.md): interleaved pages make the expected
  // share (D - 1) / D of every read remote; off counts the reads of tasks run on another domain's workers.
  const numa::Plan& numa_plan = im.numa_plan;
  const bool several = !replicated && !im.worker_domain.empty();
  const bool off_count = several && numa_plan.mode == numa::Mode::off;
  const bool recording = im.tracing || tuning;
  if (several && numa_plan.mode == numa::Mode::interleave && !b.pages_placed && numa_plan.real_topology)
    for (const auto& v : g.values)
      if (!v.fused_away) numa::interleave(v.data.get(), static_cast<size_t>(v.shape.numel()) * sizeof(float),
                                          numa_plan.interleave_nodes);
  b.pages_placed = true;
  if (several) {
    im.task_reads.resize(nodes.size());
    uint64_t total = 0;
    for (size_t i = 0; i < nodes.size(); ++i) total += im.task_reads[i] = engine::read_bytes(im.tasks[i]);
    const double d = static_cast<double>(numa_plan.domain_cpus.size());
    if (!off_count) stats.remote_bytes = static_cast<double>(total) * (d - 1.0) / d;
    g_off.remote = 0;
    if (off_count && !recording)  // a recorded run has each task's worker in the recorder instead
      for (size_t i = 0; i < nodes.size(); ++i) {
        im.tasks[i]->callback_func = count_remote_reads;
        im.tasks[i]->callback_arg = &im.task_reads[i];
      }
  }
  // A tuning run measures every task (StarPU profiling must be on before submission).
  if (tuning && !im.tracing) starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  if (im.tracing || tuning) im.recorder.begin_run(im.tasks);

  for (size_t i = 0; i < nodes.size(); ++i) {
    const int ret = starpu_task_submit(im.tasks[i]);
    if (ret != 0) {
      for (size_t j = i; j < nodes.size(); ++j) starpu_task_destroy(im.tasks[j]);
      starpu_task_wait_for_all();
      detail::fail(Status::runtime_error, "submitting node '" + nodes[i].name + "' failed: " +
                                              (ret == -ENODEV ? "no worker can run it" : std::strerror(-ret)));
    }
    ++stats.tasks;
  }
  starpu_task_wait_for_all();
  stats.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  im.info.combined_workers = starpu_combined_worker_get_count();
  if (im.tracing || tuning) im.recorder.end_run(g, b.plan, im.info.own_policy, im.runs);
  if (off_count && !recording) stats.remote_bytes = static_cast<double>(g_off.remote.load());
  if (off_count && recording)
    for (size_t i = 0; i < nodes.size(); ++i) {
      const auto& cores = im.recorder.tasks()[i].cores;
      if (!cores.empty() && im.worker_domain[static_cast<size_t>(cores[0])] != g_off.home)
        stats.remote_bytes += static_cast<double>(im.task_reads[i]);
    }
  if (tuning) {
    b.corun->record(im.recorder.tasks());
    if (!im.tracing) starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
  }
  stats.tuning = tuning;
  ++im.runs;
  const std::string err = codelets::take_kernel_error();
  CORUN_CHECK(err.empty(), Status::runtime_error, err);
  return stats;
}

RunStats Engine::run_replicated(const std::vector<Graph*>& replicas, float learning_rate, float momentum) {
  using codelets::Access;
  using codelets::OpKind;
  Impl& im = *impl_;
  const size_t n = im.places.size();
  CORUN_CHECK(replicas.size() == n, Status::invalid_argument,
              "Engine::run_replicated: got " << replicas.size() << " graphs for the " << n << " replicas of NUMA "
                                             << numa::describe(im.numa_plan)
                                             << "; build one graph per replica (Engine::info().replicas)");
  CORUN_CHECK(std::isfinite(learning_rate) && learning_rate > 0.0f, Status::invalid_argument,
              "Engine::run_replicated: the learning rate must be a positive number, got " << learning_rate);
  CORUN_CHECK(std::isfinite(momentum) && momentum >= 0.0f && momentum < 1.0f, Status::invalid_argument,
              "Engine::run_replicated: the momentum must be in [0, 1), got " << momentum);
  CORUN_CHECK(!im.tracing, Status::invalid_config, "Engine::run_replicated: tracing replicated runs is not supported");
  CORUN_CHECK(im.info.policy != "corun", Status::invalid_config,
              "Engine::run_replicated: the corun policy's width search runs on one graph; choose another CORUN_SCHED "
              "for replicas");

  // Every replica: distinct graph, no SGD nodes, the same parameters as replica 0, each with a gradient.
  std::vector<std::vector<Tensor>> params(n), grads(n);
  for (size_t r = 0; r < n; ++r) {
    Graph& g = *replicas[r];
    for (size_t q = 0; q < r; ++q)
      CORUN_CHECK(replicas[q] != &g, Status::invalid_argument,
                  "Engine::run_replicated: replicas " << q << " and " << r << " are the same graph; build one per replica");
    for (const auto& node : g.impl().nodes)
      CORUN_CHECK(node.call.kind != OpKind::sgd && node.call.kind != OpKind::sgd_momentum, Status::invalid_argument,
                  "Engine::run_replicated: replica " << r << " has SGD update nodes ('" << node.name
                                                     << "'); build it with backward(loss, {.sgd_update = false}): the "
                                                        "update is applied once, after the gradients are summed");
    params[r] = g.params();
    CORUN_CHECK(!params[r].empty(), Status::invalid_argument, "Engine::run_replicated: replica " << r << " has no parameter");
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
  // Momentum: the root's velocity of every parameter, by name (backward with sgd_update = false makes them).
  std::vector<Tensor> velocities;
  if (momentum > 0.0f) {
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
  std::vector<Impl::Bound*> bound(n);
  for (size_t r = 0; r < n; ++r) {
    bound[r] = &im.bind(*replicas[r], im.places[r].memory_node);
    // Once per binding, on a real machine whose replicas span several domains: the pages of the replica's
    // buffers go to its domain (they were first touched by the thread that built the graph).
    if (!bound[r]->pages_placed && im.numa_plan.spans_several_domains() && im.numa_plan.real_topology && numa::machine_has_node(im.places[r].home_os_index))
      for (const auto& v : replicas[r]->impl().values)
        if (!v.fused_away)
          numa::move_to_node(v.data.get(), static_cast<size_t>(v.shape.numel()) * sizeof(float),
                             im.places[r].home_os_index);
    bound[r]->pages_placed = true;
  }

  // The engine's own calls depend on the parameters' sizes only: made again when they change.
  const size_t np = params[0].size();
  auto numel_of = [&](size_t k) { return replicas[0]->impl().values[static_cast<size_t>(params[0][k].id())].shape.numel(); };
  bool same = im.sync_calls.size() == np;
  for (size_t k = 0; same && k < np; ++k) same = im.sync_calls[k].add_child.shapes[0].numel() == numel_of(k);
  if (!same) {
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
      c.copy.kind = OpKind::slice;
      c.copy.shapes = {flat, flat};
      c.copy.modes = {Access::read, Access::write};
      c.copy.i = {0, 0, numel, 0};
    }
  }
  // The loss of each replica is a mean over its rows, so the gradients sum to `replicas` times the whole
  // batch's mean gradient: dividing by n keeps the one-solver update (exactly when n is a power of two).
  for (size_t k = 0; k < np; ++k) {
    Impl::SyncCalls& c = im.sync_calls[k];
    c.update.f = learning_rate / static_cast<float>(n);
    c.mean.f = 1.0f / static_cast<float>(n);
    c.momentum.f = learning_rate;
    c.momentum.i[0] = codelets::sgd_momentum_encode(momentum);
  }
  // The mean gradients live at the root, allocated once (and again only when the parameters change).
  const bool mean_ok = im.mean_grad_handles.size() == np && same &&
                       (np == 0 || starpu_data_get_home_node(im.mean_grad_handles[0]) == im.places[0].memory_node);
  if (momentum > 0.0f && !mean_ok) {
    im.drop_mean_grads();
    for (size_t k = 0; k < np; ++k) {
      im.mean_grads.emplace_back(new float[static_cast<size_t>(numel_of(k))]());
      starpu_data_handle_t h = nullptr;
      starpu_vector_data_register(&h, im.places[0].memory_node, reinterpret_cast<uintptr_t>(im.mean_grads.back().get()),
                                  static_cast<uint32_t>(numel_of(k)), sizeof(float));
      im.mean_grad_handles.push_back(h);
    }
  }

  RunStats stats;
  g_replica.remote = 0;
  g_replica.outside = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto submit = [&](starpu_task* task, size_t r) {
    task->sched_ctx = im.places[r].ctx;
    task->callback_func = count_replica_task;
    task->callback_arg = task;
    const std::string name = task->name ? task->name : "?";
    const int ret = starpu_task_submit(task);
    if (ret != 0) {
      starpu_task_destroy(task);
      starpu_task_wait_for_all();
      detail::fail(Status::runtime_error, "submitting '" + name + "' of replica " + std::to_string(r) + " failed: " +
                                              (ret == -ENODEV ? "no worker can run it" : std::strerror(-ret)));
    }
    ++stats.tasks;
  };
  for (size_t r = 0; r < n; ++r) {
    const auto& g = replicas[r]->impl();
    Impl::Bound& b = *bound[r];
    im.tasks.assign(g.nodes.size(), nullptr);
    for (size_t i = 0; i < g.nodes.size(); ++i) im.tasks[i] = make_task(g.nodes[i], b.handles);
    if (im.planner) {
      im.planner->plan(g, im.tasks, b.plan, nullptr);
      for (size_t i = 0; i < g.nodes.size(); ++i) im.tasks[i]->sched_data = &b.plan.hints[i];
    }
    for (size_t i = 0; i < im.tasks.size(); ++i) {
      try {
        submit(im.tasks[i], r);
      } catch (...) {  // the tasks not submitted yet are still ours to free
        for (size_t j = i + 1; j < im.tasks.size(); ++j) starpu_task_destroy(im.tasks[j]);
        throw;
      }
    }
  }
  auto handle = [&](size_t r, Tensor t) { return bound[r]->handles[static_cast<size_t>(t.id())]; };
  // Bottom-up: a replica's children have larger indices, so their own sums are submitted before theirs.
  for (size_t r = n; r-- > 0;)
    for (int c : im.numa_plan.replicas[r].children)
      for (size_t k = 0; k < np; ++k)
        submit(make_call_task(im.sync_calls[k].add_child,
                              {handle(r, grads[r][k]), handle(static_cast<size_t>(c), grads[c][k])}, "replica_grad_sum"),
               r);
  for (size_t k = 0; k < np; ++k) {
    if (momentum > 0.0f) {
      submit(make_call_task(im.sync_calls[k].mean, {handle(0, grads[0][k]), im.mean_grad_handles[k]}, "replica_grad_mean"), 0);
      submit(make_call_task(im.sync_calls[k].momentum,
                            {handle(0, params[0][k]), handle(0, velocities[k]), im.mean_grad_handles[k]},
                            "replica_update"),
             0);
    } else {
      submit(make_call_task(im.sync_calls[k].update, {handle(0, params[0][k]), handle(0, grads[0][k])}, "replica_update"), 0);
    }
  }
  for (size_t r = 1; r < n; ++r)
    for (size_t k = 0; k < np; ++k)
      submit(make_call_task(im.sync_calls[k].copy, {handle(0, params[0][k]), handle(r, params[r][k])},
                            "replica_param_copy"),
             r);
  starpu_task_wait_for_all();
  stats.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  stats.remote_bytes = static_cast<double>(g_replica.remote.load());
  stats.tasks_outside_replica = g_replica.outside.load();
  ++im.runs;
  const std::string err = codelets::take_kernel_error();
  CORUN_CHECK(err.empty(), Status::runtime_error, err);
  return stats;
}

void Engine::set_tracing(bool on) {
  Impl& im = *impl_;
  im.tracing = on;
  if (on) starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  // Built-ins get predictions too (for the trace and the lower bound), over widths up to all workers.
  if (on && !im.planner) {
    const int workers = static_cast<int>(starpu_cpu_worker_get_count());
    im.planner = std::make_unique<engine::Planner>(sched::ExecutorLayout{workers, 1}, workers, 0);
  }
}

const std::vector<TraceTask>& Engine::trace() const { return impl_->recorder.tasks(); }

TraceMeta Engine::trace_meta() const {
  TraceMeta m = impl_->recorder.meta();
  m.policy = impl_->info.policy;
  m.layout = impl_->info.layout;
  m.workers = impl_->info.workers;
  m.machine = machine::cpu_model() + ", " + machine::topology_summary() + ", " + impl_->info.machine_key;
  return m;
}

std::vector<float> Engine::read(Graph& graph, Tensor t) {
  starpu_data_handle_t h = impl_->handle(graph, t, "Engine::read");
  // On the handle's home node: that is where the graph's own buffer is (a replica's domain, or main RAM).
  const int home = starpu_data_get_home_node(h);
  starpu_check(starpu_data_acquire_on_node(h, home, STARPU_R), "starpu_data_acquire");
  const auto& v = graph.impl().values[static_cast<size_t>(t.id())];
  std::vector<float> out(v.data.get(), v.data.get() + v.shape.numel());
  starpu_data_release_on_node(h, home);
  return out;
}

void Engine::write(Graph& graph, Tensor t, const float* values, size_t count) {
  starpu_data_handle_t h = impl_->handle(graph, t, "Engine::write");
  auto& v = graph.impl().values[static_cast<size_t>(t.id())];
  CORUN_CHECK(static_cast<int64_t>(count) == v.shape.numel(), Status::invalid_argument,
              "Engine::write '" << v.name << "': got " << count << " floats for shape " << v.shape.str() << " ("
                                << v.shape.numel() << " floats)");
  const int home = starpu_data_get_home_node(h);
  starpu_check(starpu_data_acquire_on_node(h, home, STARPU_W), "starpu_data_acquire");
  std::memcpy(v.data.get(), values, count * sizeof(float));
  starpu_data_release_on_node(h, home);
}

void Engine::write(Graph& graph, Tensor t, const std::vector<float>& values) {
  write(graph, t, values.data(), values.size());
}

void Engine::release(Graph& graph) {
  auto it = impl_->bound.find(&graph.impl());
  if (it == impl_->bound.end()) return;
  impl_->unbind(graph.impl(), it->second.handles);
  impl_->bound.erase(it);
}

const EngineInfo& Engine::info() const { return impl_->info; }

}  // namespace corun
