// Configuration checks before StarPU starts (engine/preflight.hpp, check_config): the policy name, the
// policy-specific CORUN_* settings and their files, and StarPU's own variables. Reading the environment's
// STARPU_* variables here is allowed: layering.env_reads confines CORUN_* reads to config.cpp only.
#include "engine/preflight.hpp"

#include <corun/machine.hpp>

#include "base/check.hpp"
#include "base/env.hpp"
#include "base/hash.hpp"
#include "base/parse.hpp"
#include "codelets/op.hpp"
#include "engine/model_files.hpp"
#include "sched/layout.hpp"
#include "sched/profiler/profile_file.hpp"
#include "sched/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace corun::engine {

namespace {

// An integer variable StarPU reads with starpu_get_env_number (which aborts on anything but an integer).
void check_starpu_int(const char* name, long min, long max, const char* meaning) {
  const auto v = env::get(name);
  if (!v) return;
  const auto x = parse::integer(*v);
  CORUN_CHECK(x && *x >= min && *x <= max, Status::invalid_config,
              name << "='" << *v << "' is not valid: " << meaning << ", an integer in [" << min << ", " << max
                   << "]; fix or unset it");
}

// A CPU list as StarPU 1.3 reads STARPU_WORKERS_CPUID / _COREID: ids separated by blanks, each "N", "N-M"
// (N <= M) or "N-" (N to the last CPU). StarPU stops silently at the first thing it cannot read and binds
// the rest of the workers round-robin over what it read, so a typo would bind every worker to one CPU.
// Returns the highest id the list names (-1 when the variable is unset).
long check_cpu_list(const char* name) {
  const auto v = env::get(name);
  if (!v) return -1;
  const std::string& s = *v;
  const std::string rule = "' is not a CPU list: ids separated by blanks, each N, N-M or N- (e.g. \"0 2 4-7\")";
  size_t i = 0, ids = 0;
  long highest = -1;
  auto number = [&](long* out) {
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    const auto x = i > start && i - start < 10 ? parse::integer(s.substr(start, i - start)) : std::nullopt;
    CORUN_CHECK(x.has_value(), Status::invalid_config, name << "='" << s << rule);
    *out = *x;
    highest = std::max(highest, *x);
  };
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    long first = 0;
    number(&first);
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) {
        long last = 0;
        number(&last);
        CORUN_CHECK(first <= last, Status::invalid_config,
                    name << "='" << s << "': the range " << first << "-" << last << " is empty; write it low-high");
      }
    }
    CORUN_CHECK(i == s.size() || std::isspace(static_cast<unsigned char>(s[i])), Status::invalid_config,
                name << "='" << s << rule);
    ++ids;
  }
  CORUN_CHECK(ids > 0, Status::invalid_config, name << "='" << s << rule);
  return highest;
}

// StarPU 1.3 takes a binding id modulo the machine's count without a word (STARPU_WORKERS_CPUID=99999 binds
// every worker to one CPU), so an id the machine lacks is refused here, naming it.
void check_ids_exist(const char* name, long highest, size_t count, const char* what) {
  CORUN_CHECK(highest < static_cast<long>(count), Status::invalid_config,
              name << "='" << *env::get(name) << "' names " << what << " " << highest << ", but this machine has "
                   << count << " " << what << "s (0 to " << count - 1
                   << ", StarPU's logical numbering): StarPU would wrap it onto another one and bind several "
                      "workers there; name existing "
                   << what << "s or unset it");
}

// The checks that need the machine's CPUs and cores (one hwloc topology load, so only when one of these
// variables is set). A fake topology (HWLOC_SYNTHETIC, ...) is StarPU's business alone.
void check_starpu_binding(long highest_cpu, long highest_core) {
  const auto reserve = env::get_int("STARPU_RESERVE_NCPU", 0, 1 << 16);
  if (highest_cpu < 0 && highest_core < 0 && !reserve) return;
  const machine::Allocation a = machine::allocation();
  if (a.fake_topology) return;
  if (highest_cpu >= 0) check_ids_exist("STARPU_WORKERS_CPUID", highest_cpu, a.machine_cpus.size(), "CPU");
  if (highest_core >= 0)
    check_ids_exist("STARPU_WORKERS_COREID", highest_core,
                    static_cast<size_t>(machine::cores_containing(a.machine_cpus)), "core");
  // Reserving every core leaves StarPU no worker: starpu_init then fails with -ENODEV, whose message can only
  // guess at STARPU_NCPU.
  CORUN_CHECK(!reserve || *reserve < a.cores, Status::invalid_config,
              "STARPU_RESERVE_NCPU=" << *reserve << " keeps " << *reserve << " CPUs free of workers, but this process "
                                     << "may use " << a.cores << " core(s) (" << machine::cpu_list(a.usable)
                                     << "): no worker would be left to run a task; set STARPU_RESERVE_NCPU below "
                                     << a.cores << " or unset it");
}

}  // namespace

void check_policy_options(const Config& config, const sched::ResolvedPolicy& policy) {
  const bool own = policy.policy != nullptr;
  const bool tunes = policy.make_tuner != nullptr;
  const auto tuner = [](const sched::PolicyEntry& p) { return p.make_tuner != nullptr; };
  const auto any = [](const sched::PolicyEntry&) { return true; };
  const auto lays_out = [](const sched::PolicyEntry& p) { return p.traits.executor_layout; };
  CORUN_CHECK(tunes || (config.width_interval == 0 && !config.deterministic && config.schedule.empty() &&
                        !config.verbose_sched),
              Status::invalid_config,
              "CORUN_WIDTH_INTERVAL, CORUN_DETERMINISTIC, CORUN_SCHEDULE and CORUN_VERBOSE=sched apply to the "
              "policies with a width search ("
                  << sched::own_policy_names(tuner) << "), not to '" << policy.name
                  << "'; unset them or choose CORUN_SCHED=" << sched::first_own_policy(tuner));
  CORUN_CHECK(
      config.schedule.empty() || config.deterministic, Status::invalid_config,
      "CORUN_SCHEDULE is the frozen schedule of deterministic mode; set CORUN_DETERMINISTIC=1 too, or unset it");
  CORUN_CHECK(own || (config.executors.empty() && config.profile.empty() && config.fixed_width == 0),
              Status::invalid_config,
              "CORUN_EXECUTORS, CORUN_PROFILE and CORUN_FIXED_WIDTH apply to corun's policies ("
                  << sched::own_policy_names(any) << "), not to the StarPU built-in '" << policy.name
                  << "'; unset them or choose CORUN_SCHED=" << sched::first_own_policy(lays_out));
  CORUN_CHECK(!own || policy.traits.executor_layout || (config.executors.empty() && config.profile.empty()),
              Status::invalid_config,
              "CORUN_EXECUTORS and CORUN_PROFILE set the executor layout of "
                  << sched::own_policy_names(lays_out) << "; the policy '" << policy.name << "' forms its teams per op from all cores: unset them");
}

// Identifies the op kinds' numbering: a file of remembered climbs from a build with another op list is ignored.
uint64_t op_kinds_tag() {
  uint64_t h = hash::kFnvBasis;
  for (int k = 0; k < static_cast<int>(codelets::OpKind::count_); ++k)
    h = hash::fnv1a(std::string(codelets::op_info(static_cast<codelets::OpKind>(k)).name) + ";", h);
  return h;
}

sched::TunerSettings tuner_settings(const Config& config, int cores, bool simulated, const std::string& machine_key) {
  sched::TunerSettings s;
  s.cores = cores;
  // The climb's step: one width at a time up to 16 cores, then cores / 16 (the co-run paper's x).
  s.width_interval = config.width_interval > 0 ? config.width_interval : std::max(1, cores / 16);
  s.fixed_width = config.fixed_width;
  s.deterministic = config.deterministic;
  s.schedule_file = config.schedule;
  s.models_are_measurements = simulated;
  s.op_kinds = static_cast<int>(codelets::OpKind::count_);
  if (config.width_memory && !simulated) {
    s.climb_memory_file = climb_memory_path(machine_key);
    s.op_kinds_tag = op_kinds_tag();
  }
  return s;
}

void check_starpu_environment() {
  // The worker count: StarPU caps a count above its build's maximum with a warning, so only the form and
  // the sign are corun's business here (0 workers would leave nothing to run the tasks).
  check_starpu_int("STARPU_NCPU", 1, 1 << 16, "the number of CPU workers");
  check_starpu_int("STARPU_NCPUS", 1, 1 << 16, "the number of CPU workers (old name of STARPU_NCPU)");
  check_starpu_int("STARPU_RESERVE_NCPU", 0, 1 << 16, "CPUs kept free of workers");
  const long highest_cpu = check_cpu_list("STARPU_WORKERS_CPUID");
  const long highest_core = check_cpu_list("STARPU_WORKERS_COREID");
  check_starpu_int("STARPU_WORKERS_GETBIND", 0, 1, "1 binds the workers inside the process's affinity mask");
  check_starpu_int("STARPU_WORKERS_NOBIND", 0, 1, "1 leaves the worker threads unbound");
  check_starpu_int("STARPU_MAIN_THREAD_BIND", 0, 1, "1 binds the main thread to a CPU of its own");
  check_starpu_int("STARPU_MAIN_THREAD_CPUID", 0, 1 << 16, "the CPU the main thread is bound to");
  check_starpu_int("STARPU_CALIBRATE", 0, 2, "1 records perfmodel samples, 2 discards the history first");
  check_starpu_int("STARPU_HISTORY_MAX_ERROR", 0, 1 << 30, "the percentage off the mean a sample may be");
  check_starpu_int("STARPU_USE_NUMA", 0, 1, "1 makes StarPU manage NUMA memory nodes");
  check_starpu_int("STARPU_SILENT", 0, 1, "1 silences StarPU's own messages");
  check_starpu_binding(highest_cpu, highest_core);
}

void drop_empty_starpu_variables() {
  // StarPU 1.3 reads an empty variable as a value: an empty STARPU_WORKERS_CPUID or _COREID asserts in
  // topology.c, an empty STARPU_NCPU fails starpu_init, an empty XDG_CACHE_HOME or STARPU_HOME would be taken
  // as the models' home (utils.c). For corun an empty variable counts as unset (docs/env-vars.md).
  for (const char* name :
       {"STARPU_NCPU", "STARPU_NCPUS", "STARPU_RESERVE_NCPU", "STARPU_WORKERS_CPUID", "STARPU_WORKERS_COREID",
        "STARPU_WORKERS_GETBIND", "STARPU_WORKERS_NOBIND", "STARPU_MAIN_THREAD_BIND", "STARPU_MAIN_THREAD_CPUID",
        "STARPU_CALIBRATE", "STARPU_HISTORY_MAX_ERROR", "STARPU_USE_NUMA", "STARPU_SILENT", "STARPU_HOSTNAME",
        "STARPU_PERF_MODEL_DIR", "STARPU_HOME", "XDG_CACHE_HOME", "STARPU_SCHED"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v == '\0') unsetenv(name);
  }
}

}  // namespace corun::engine

namespace corun {

void check_config(const Config& config) {
  const sched::ResolvedPolicy policy = sched::resolve_policy(config.policy.c_str(), std::getenv("STARPU_SCHED"));
  if (policy.help) return;  // not an error here: the caller prints the list (policy_help) or the Engine throws
  engine::check_policy_options(config, policy);
  if (!config.executors.empty()) sched::parse_layout(config.executors, "CORUN_EXECUTORS");
  if (!config.profile.empty()) sched::read_profile(config.profile);
  if (policy.check_tuner_settings != nullptr)
    policy.check_tuner_settings(engine::tuner_settings(config, /*cores=*/1, /*simulated=*/false));
  engine::check_starpu_environment();
}

}  // namespace corun
