// StarPU's lifetime: the policy resolved before starpu_init (with the options of corun's policies), the
// workers from the allocation, the NUMA replicas and their contexts, starpu_shutdown; and what the running
// configuration is (EngineInfo, traces).
#include "engine/engine_impl.hpp"

#include <corun/machine.hpp>

#include "base/check.hpp"
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/matmul/gemm_impls.hpp"
#include "codelets/starpu/codelets.hpp"
#include "engine/allocation.hpp"
#include "engine/blas.hpp"
#include "engine/conv_kernel.hpp"
#include "engine/cross_ranks.hpp"
#include "engine/model_files.hpp"
#include "engine/preflight.hpp"
#include "engine/starpu_check.hpp"
#include "sched/layout.hpp"
#include "sched/profiler/profile_file.hpp"
#include "sched/registry.hpp"

#include <sched.h>
#include <algorithm>
#include <thread>
#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace corun {

namespace {
std::atomic<bool> g_engine_alive{false};

// A sample more than this many percent off the mean counts as an error in StarPU's history models, and an
// entry with as many errors as samples is flushed (starpu-1.3-notes.md (c)). StarPU's default of 50 never
// lets µs-sized ops calibrate on a shared machine; the mean of noisy samples is what the planner needs.
constexpr const char* kHistoryMaxError = "1000";

// Sets the executor layout for our policies from CORUN_EXECUTORS or CORUN_PROFILE; returns where it came
// from. check_config (engine/preflight.cpp) has refused the settings that do not apply to the policy.
std::string configure_policy_options(const Config& config, bool own, const std::string& policy,
                                     const std::string& key) {
  if (!own) {
    sched::set_policy_options({});
    return "";
  }
  sched::PolicyOptions opt;
  opt.verbose_sched = config.verbose_sched;
  opt.merge_when_alone = config.cpf_merge;
  // Calibration measures the width it asks for, and a deterministic schedule keeps its widths.
  opt.cotenancy = config.cotenancy && config.fixed_width == 0 && !config.deterministic;
  opt.quiet = config.quiet;
  opt.idle_naps = sched::parse_idle_naps(config.idle_naps);
  opt.layout = {0, 0};  // cpf sizes its default executors from the workers it gets (sched::default_executor_width)
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

// What the engine runs with, once StarPU has started.
void fill_info(EngineInfo& i, const sched::ResolvedPolicy& policy, const std::string& workers_source,
               const Config& config) {
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
  i.conv_kernels = codelets::dnnl_description() + " (CORUN_CONV_KERNEL=" + config.conv_kernel + ")";
  i.gemm_kernels = codelets::gemm_description(codelets::parse_gemm_kernel(config.gemm_kernel)) + " (CORUN_GEMM_KERNEL=" + config.gemm_kernel + ")";
  i.machine_key = std::getenv("STARPU_HOSTNAME");
#ifdef STARPU_SIMGRID
  i.simulated = true;
#endif
}

// CORUN_SCHED resolved against STARPU_SCHED, and the policy's settings, their files and StarPU's variables
// checked before anything starts. CORUN_SCHED=help lists the policies and fails.
sched::ResolvedPolicy resolve_checked_policy(const Config& config) {
  engine::drop_empty_starpu_variables();
  const char* starpu_sched = std::getenv("STARPU_SCHED");
  auto policy = sched::resolve_policy(config.policy.c_str(), starpu_sched);
  check_config(config);
  if (policy.help) {
    std::fputs(sched::policy_help().c_str(), stdout);
    detail::fail(Status::invalid_config,
                 "CORUN_SCHED=help: the policies are listed above; set CORUN_SCHED to one of them");
  }
  // STARPU_SCHED naming a built-in silently beats conf.sched_policy; it agrees with us here (checked by
  // the resolver), so drop it for our own policies. Set but empty, it counts as unset for corun, while
  // StarPU looks up the name "" and silently runs lws instead of conf.sched_policy_name
  // (src/core/sched_policy.c:197-209): drop it then too.
  if (policy.policy != nullptr || (starpu_sched != nullptr && *starpu_sched == '\0')) unsetenv("STARPU_SCHED");
  return policy;
}

// The StarPU variables corun sets unless the user did, read by starpu_init; and the perfmodel files of this
// machine kind, a corrupt one set aside.
void set_starpu_variables(const sched::ResolvedPolicy& policy, const std::string& machine_key, bool quiet) {
  if (std::getenv("STARPU_HOSTNAME") == nullptr) setenv("STARPU_HOSTNAME", machine_key.c_str(), 1);
  if (policy.policy != nullptr && std::getenv("STARPU_HISTORY_MAX_ERROR") == nullptr)
    setenv("STARPU_HISTORY_MAX_ERROR", kHistoryMaxError, 1);
  // StarPU's informational messages (bus calibration, a "not calibrated enough" paragraph per fresh op
  // model) bury corun's own lines; `corun train` says in one line that models are calibrating. Errors
  // still print. STARPU_SILENT=0 brings the messages back.
  if (std::getenv("STARPU_SILENT") == nullptr) setenv("STARPU_SILENT", "1", 1);
  engine::quarantine_corrupt_models(std::getenv("STARPU_HOSTNAME"), quiet);
}

// starpu_init with the policy and the workers (Config::ncpus or the allocation), the BLAS buffers of the
// workers, and StarPU-MPI when there are several ranks. Returns where the worker count came from.
std::string start_starpu(const Config& config, const sched::ResolvedPolicy& policy,
                         const machine::Allocation& allocation) {
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
    workers_source = engine::apply_allocation(conf, allocation);  // one worker per allocated core, in the mask
  }
  conf.ncuda = 0;
  conf.nopencl = 0;
  // conf.ncpus holds STARPU_NCPU or the allocation's count here; -1 (StarPU's own choice) is every core.
  blas::check_address_space(conf.ncpus > 0 ? static_cast<unsigned>(conf.ncpus)
                                           : std::max(1u, std::thread::hardware_concurrency()));
  {
    const engine::BusFilesLock bus_files(std::getenv("STARPU_HOSTNAME"));
    starpu_check(starpu_init(&conf), "starpu_init");
  }
  // Now, not mid-run: a failed BLAS allocation spins instead of failing.
  blas::provision_worker_buffers(/*touch_on_workers=*/policy.policy == nullptr);
  // Several MPI ranks: StarPU-MPI's progress thread and tag matching (engine/cross_ranks.hpp).
  if (engine::CrossRanks* ranks = engine::cross_ranks()) {
    try {
      ranks->attach();
    } catch (...) {
      starpu_shutdown();
      throw;
    }
  }
  return workers_source;
}
}  // namespace

// The replicas' places (contexts, workers, home nodes) once StarPU runs, and what info says of the domains.
void Engine::Impl::set_up_replicas() {
  places = engine::place_replicas(numa_plan, policy.policy, policy.name);
  info.replicas = static_cast<int>(places.size());
  const numa::Plan& plan = numa_plan;
  info.numa_mode = numa::mode_name(plan.mode);
  if (places.size() == 1 && plan.domain_cpus.size() > 1) {  // off or interleave over several domains
    worker_domain = engine::worker_domains(plan, places[0]);
    // Where Graph's buffers get first touched: the main thread's domain (a fake topology's CPUs are not
    // this machine's, so there it is the first domain).
    home_domain = plan.real_topology ? engine::domain_of_cpu(plan, sched_getcpu()) : 0;
    info.numa_domains = static_cast<int>(plan.domain_cpus.size());
  } else if (places.size() > 1) {
    std::vector<int> homes;
    for (const auto& r : plan.replicas)
      if (std::find(homes.begin(), homes.end(), r.home_os_index) == homes.end()) homes.push_back(r.home_os_index);
    info.numa_domains = static_cast<int>(homes.size());
  }
}

Engine::Engine(const Config& config) : impl_(std::make_unique<Impl>()) {
  bool expected = false;
  CORUN_CHECK(g_engine_alive.compare_exchange_strong(expected, true), Status::invalid_config,
              "an Engine already exists in this process (StarPU is initialised once); destroy it first");
  try {
    const sched::ResolvedPolicy policy = resolve_checked_policy(config);
    // Perfmodels are keyed by machine kind, not host name (STARPU_HOSTNAME names the model files).
    const std::string key = machine::machine_key();  // loads the hwloc topology: once per Engine
    std::string layout_source = configure_policy_options(config, policy.policy != nullptr, policy.name, key);
    impl_->config = config;
    impl_->policy = policy;
    set_starpu_variables(policy, key, config.quiet);

    // CORUN_NUMA / CORUN_REPLICAS: checked before StarPU starts (replicas.hpp).
    const machine::Allocation allocation = machine::allocation(config.cgroup_root);
    impl_->numa_plan = engine::plan_numa(allocation.fake_topology ? std::vector<int>{} : allocation.usable, policy,
                                         config.quiet, engine::numa_request(config));

    blas::pin_single_thread();
    codelets::set_kernel_choice(config.ref_kernels ? codelets::KernelChoice::ref : codelets::KernelChoice::fast);
    const std::string workers_source = start_starpu(config, policy, allocation);

    EngineInfo& i = impl_->info;
    fill_info(i, policy, workers_source, config);
    // The widest team a convolution can feed: its cut into work items (a process-wide constant, never the width).
    codelets::set_conv_work_items(i.workers);
    if (i.own_policy) {
      const sched::ExecutorLayout layout = sched::effective_layout();
      i.layout = layout.str();
      i.layout_source = layout_source;
      // cpf may merge executors for a lone task (Config::cpf_merge): its hints then carry every width's model.
      const int hint_width = policy.traits.merges_executors && config.cpf_merge ? layout.count * layout.width : layout.width;
      impl_->planner = std::make_unique<engine::Planner>(layout, hint_width, config.fixed_width);
    }
    impl_->set_up_replicas();
    if (!config.quiet) std::fprintf(stderr, "corun: %s\n", i.summary().c_str());
    if (const std::string blas = blas::core_warning(); !blas.empty() && !config.quiet)
      std::fprintf(stderr, "corun: warning: %s\n", blas.c_str());
  } catch (...) {
    g_engine_alive = false;
    throw;
  }
}

Engine::~Engine() {
  impl_->drop_mean_grads();
  for (auto& [graph, b] : impl_->bound) impl_->unbind(*graph, b);
  impl_->bound.clear();
  if (engine::CrossRanks* ranks = engine::cross_ranks()) ranks->detach();
  starpu_shutdown();
  g_engine_alive = false;
}

int planned_replicas(const Config& config) {
  const machine::Allocation allocation = machine::allocation(config.cgroup_root);
  return static_cast<int>(engine::plan_numa_only(allocation.fake_topology ? std::vector<int>{} : allocation.usable,
                                                 engine::numa_request(config))
                              .replicas.size());
}

const EngineInfo& Engine::info() const {
  return impl_->info;
}

const Config& Engine::config() const { return impl_->config; }

void Engine::set_tracing(bool on) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.mu);  // a traced run is alone: submit() reads the flag under the lock
  im.tracing = on;
  if (on) starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  // Built-ins get predictions too (for the trace and the lower bound), over widths up to all workers.
  if (on && !im.planner) {
    const int workers = static_cast<int>(starpu_cpu_worker_get_count());
    im.planner = std::make_unique<engine::Planner>(sched::ExecutorLayout{workers, 1}, workers, 0);
  }
}

const std::vector<TraceTask>& Engine::trace() const {
  return impl_->recorder.tasks();
}

TraceMeta Engine::trace_meta() const {
  TraceMeta m = impl_->recorder.meta();
  m.policy = impl_->info.policy;
  m.layout = impl_->info.layout;
  m.workers = impl_->info.workers;
  m.machine = machine::cpu_model() + ", " + machine::topology_summary() + ", " + impl_->info.machine_key;
  return m;
}

}  // namespace corun
