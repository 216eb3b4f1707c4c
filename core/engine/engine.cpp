// Engine: StarPU lifetime, data registration and one submission of a graph per run().
#include <corun/engine.hpp>

#include "codelets/starpu/codelets.hpp"
#include "core/base/check.hpp"
#include "core/base/env.hpp"
#include "core/engine/blas.hpp"
#include "core/engine/starpu_check.hpp"
#include "graphs/graph_impl.hpp"
#include "sched/registry.hpp"

#include <starpu.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
}  // namespace

Config Config::from_env() {
  Config c;
  if (auto v = env::get("CORUN_SCHED")) c.policy = *v;
  if (auto k = env::get_choice("CORUN_KERNELS", {"fast", "ref"})) c.ref_kernels = *k == "ref";
  if (auto q = env::get_bool("CORUN_QUIET")) c.quiet = *q;
  return c;
}

std::string EngineInfo::summary() const {
  std::ostringstream os;
  os << "policy=" << policy << " (" << (own_policy ? "corun" : "StarPU built-in") << ", from " << policy_source
     << ") workers=" << workers << " starpu=" << starpu_version << " (maxcpus " << starpu_maxcpus << ", maxnumanodes "
     << starpu_maxnumanodes << ") blas=" << blas << " core=" << blas_core << " blas_threads=" << blas_threads
     << " kernels=" << kernels;
  return os.str();
}

struct Engine::Impl {
  EngineInfo info;
  // Handles of each bound graph, indexed by value id. Keyed by the graph's storage, which a move of the
  // Graph object keeps.
  std::unordered_map<detail::GraphImpl*, std::vector<starpu_data_handle_t>> bound;

  std::vector<starpu_data_handle_t>& bind(Graph& graph) {
    auto& g = graph.impl();
    auto& handles = bound[&g];
    if (handles.empty() && !g.values.empty()) ++g.bound_engines;
    // Values added since the last run (e.g. after backward()) are registered too.
    for (size_t v = handles.size(); v < g.values.size(); ++v) {
      starpu_data_handle_t h = nullptr;
      starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(g.values[v].data.get()),
                                  static_cast<uint32_t>(g.values[v].shape.numel()), sizeof(float));
      handles.push_back(h);
    }
    return handles;
  }

  // Undoes bind(): unregisters the handles (data returns to the host buffers) and drops the binding.
  void unbind(detail::GraphImpl& g, std::vector<starpu_data_handle_t>& handles) {
    for (auto h : handles) starpu_data_unregister(h);
    if (!handles.empty()) --g.bound_engines;  // bind() counted the graph only once it had handles
    handles.clear();
  }

  starpu_data_handle_t handle(Graph& graph, Tensor t, const char* what) {
    CORUN_CHECK(t.valid() && t.belongs_to(graph), Status::invalid_argument, what << ": the tensor is not from this graph");
    auto& handles = bind(graph);
    return handles[static_cast<size_t>(t.id())];
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

    blas::pin_single_thread();
    codelets::set_kernel_choice(config.ref_kernels ? codelets::KernelChoice::ref : codelets::KernelChoice::fast);

    starpu_conf conf;
    starpu_check(starpu_conf_init(&conf), "starpu_conf_init");
    if (policy.policy != nullptr) {
      conf.sched_policy = policy.policy;
    } else {
      conf.sched_policy_name = policy.name.c_str();
    }
    if (config.ncpus >= 0) {
      conf.ncpus = config.ncpus;
      // Without this, a set STARPU_NCPU silently overrides conf.ncpus inside starpu_init. starpu_conf_init
      // already copied every other STARPU_* variable into conf, so only the fields set here change meaning.
      conf.precedence_over_environment_variables = 1;
    }
    conf.ncuda = 0;
    conf.nopencl = 0;
    starpu_check(starpu_init(&conf), "starpu_init");

    EngineInfo& i = impl_->info;
    i.policy = policy.name;
    i.policy_source = policy.source;
    i.own_policy = policy.policy != nullptr;
    i.workers = static_cast<int>(starpu_cpu_worker_get_count());
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
    if (!config.quiet) std::fprintf(stderr, "corun: %s\n", i.summary().c_str());
  } catch (...) {
    g_engine_alive = false;
    throw;
  }
}

Engine::~Engine() {
  for (auto& [graph, handles] : impl_->bound) impl_->unbind(*graph, handles);
  impl_->bound.clear();
  starpu_shutdown();
  g_engine_alive = false;
}

RunStats Engine::run(Graph& graph) {
  auto& handles = impl_->bind(graph);
  const auto& nodes = graph.impl().nodes;
  RunStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& node : nodes) {
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
    const int ret = starpu_task_submit(task);
    if (ret != 0) {
      starpu_task_wait_for_all();
      detail::fail(Status::runtime_error, "submitting node '" + node.name + "' failed: " +
                                              (ret == -ENODEV ? "no worker can run it" : std::strerror(-ret)));
    }
    ++stats.tasks;
  }
  starpu_task_wait_for_all();
  stats.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  impl_->info.combined_workers = starpu_combined_worker_get_count();
  const std::string err = codelets::take_kernel_error();
  CORUN_CHECK(err.empty(), Status::runtime_error, err);
  return stats;
}

std::vector<float> Engine::read(Graph& graph, Tensor t) {
  starpu_data_handle_t h = impl_->handle(graph, t, "Engine::read");
  starpu_check(starpu_data_acquire_on_node(h, STARPU_MAIN_RAM, STARPU_R), "starpu_data_acquire");
  const auto& v = graph.impl().values[static_cast<size_t>(t.id())];
  std::vector<float> out(v.data.get(), v.data.get() + v.shape.numel());
  starpu_data_release_on_node(h, STARPU_MAIN_RAM);
  return out;
}

void Engine::write(Graph& graph, Tensor t, const float* values, size_t count) {
  starpu_data_handle_t h = impl_->handle(graph, t, "Engine::write");
  auto& v = graph.impl().values[static_cast<size_t>(t.id())];
  CORUN_CHECK(static_cast<int64_t>(count) == v.shape.numel(), Status::invalid_argument,
              "Engine::write '" << v.name << "': got " << count << " floats for shape " << v.shape.str() << " ("
                                << v.shape.numel() << " floats)");
  starpu_check(starpu_data_acquire_on_node(h, STARPU_MAIN_RAM, STARPU_W), "starpu_data_acquire");
  std::memcpy(v.data.get(), values, count * sizeof(float));
  starpu_data_release_on_node(h, STARPU_MAIN_RAM);
}

void Engine::write(Graph& graph, Tensor t, const std::vector<float>& values) {
  write(graph, t, values.data(), values.size());
}

void Engine::release(Graph& graph) {
  auto it = impl_->bound.find(&graph.impl());
  if (it == impl_->bound.end()) return;
  impl_->unbind(graph.impl(), it->second);
  impl_->bound.erase(it);
}

const EngineInfo& Engine::info() const { return impl_->info; }

}  // namespace corun
