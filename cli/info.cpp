// corun info: what corun would run on — topology, the CPU allocation (affinity mask, cgroup cpuset and
// quota), workers and where they are bound (read back from the worker threads), StarPU caps, BLAS, and
// warnings about settings that oversubscribe the allocated cores or leave OpenBLAS on slow kernels.
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/shared_machine.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>

#include "base/env.hpp"
#include "engine/blas.hpp"
#include "engine/replicas.hpp"
#include "numa/replica_plan.hpp"
#include "numa/topology.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace corun::cli {

namespace {

// The first number of a thread-count variable (OMP_NUM_THREADS may be a list, "4,2"); 0 when unset or
// not a number (these variables belong to other libraries: corun reports them, it does not validate them).
long thread_count(const char* name) {
  const auto v = env::get(name);
  if (!v) return 0;
  return std::strtol(v->c_str(), nullptr, 10);
}

std::string plural(long n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Warnings about what would put more threads on the allocated cores than there are cores, or leave some
// idle. Each is one line of the report.
std::vector<std::string> warnings(const machine::Allocation& a, const EngineInfo& info,
                                  const std::vector<machine::WorkerBinding>& bindings, int cores_used) {
  std::vector<std::string> w;
  const std::string cores = plural(a.cores, "allocated core", "allocated cores");
  if (const long n = thread_count("OMP_NUM_THREADS"); n > 1)
    w.push_back("OMP_NUM_THREADS=" + *env::get("OMP_NUM_THREADS") + ": a library with an OpenMP pool would start " +
                std::to_string(n) + " threads next to each of the " + std::to_string(info.workers) + " workers on " +
                cores + "; corun needs none (set OMP_NUM_THREADS=1)");
  for (const char* var : {"OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"})
    if (const long n = thread_count(var); n > 1)
      w.push_back(std::string(var) + "=" + *env::get(var) +
                  ": corun runs BLAS with 1 thread per call (parallelism "
                  "comes from StarPU teams), but any other BLAS user in this job would start " +
                  std::to_string(n) + " threads on the " + cores + " (set " + var + "=1)");
  if (info.workers > cores_used && cores_used > 0)
    w.push_back(std::to_string(info.workers) + " workers share " + plural(cores_used, "core", "cores") +
                (info.workers_source == "STARPU_NCPU" ? " (STARPU_NCPU=" + *env::get("STARPU_NCPU") + ")" : "") +
                ": oversubscribed, fine for correctness tests, wrong for timing");
  if (info.workers_source == "allocation" && info.workers < a.workers)
    w.push_back("the allocation has " + cores + " but this StarPU runs at most " + std::to_string(info.starpu_maxcpus) +
                " workers (STARPU_MAXCPUS): build corun against a StarPU with more (scripts/setup.sh source)");
  if (info.workers_source == "STARPU_NCPU" && info.workers < a.cores)
    w.push_back("STARPU_NCPU=" + *env::get("STARPU_NCPU") + " leaves " + std::to_string(a.cores - info.workers) +
                " of the " + cores + " without a worker");
  if (!a.fake_topology)
    for (const auto& b : bindings) {
      std::vector<int> outside;
      std::set_difference(b.cpu_ids.begin(), b.cpu_ids.end(), a.usable.begin(), a.usable.end(),
                          std::back_inserter(outside));
      if (!outside.empty())
        w.push_back("worker " + std::to_string(b.worker) + " may run on cpus " + machine::cpu_list(outside) +
                    ", outside the allocation (" + machine::cpu_list(a.usable) + ")");
    }
  std::map<std::string, std::vector<int>> by_cpus;  // workers bound to exactly the same single CPU
  for (const auto& b : bindings)
    if (b.cpu_ids.size() == 1) by_cpus[b.cpus].push_back(b.worker);
  for (const auto& [cpus, workers] : by_cpus)
    if (workers.size() > 1)
      w.push_back(plural(static_cast<long>(workers.size()), "worker", "workers") + " are bound to the same cpu " +
                  cpus);
  if (env::get("STARPU_WORKERS_NOBIND") && *env::get("STARPU_WORKERS_NOBIND") != "0")
    w.push_back("STARPU_WORKERS_NOBIND is set: workers are not bound, the OS may move them between cores");
  for (const auto& line : sharing_warnings(a)) w.push_back(line + "; both slow down");
  if (const std::string blas = blas::core_warning(); !blas.empty()) w.push_back(blas);
  return w;
}

}  // namespace

int info(int argc, char** argv) {
  const std::vector<FlagSpec> flags = {{"--help", false, "show this help"}};
  try {
    Args args(argc, argv, 2, flags);
    if (args.has("--help")) {
      std::cout << "usage: corun info\n" << describe(flags);
      return 0;
    }
  } catch (const UsageError& e) {
    return usage_error("info", e, flags, "usage: corun info");
  }
  Config cfg = Config::from_env();
  cfg.quiet = true;
  if (policy_help_requested(cfg)) return 0;
  check_config(cfg);  // a bad policy or StarPU variable: one line, before the report starts
  const machine::Allocation a = machine::allocation(cfg.cgroup_root);  // before the engine: the main thread's mask
  // NUMA domains of the allocation and the replica plan CORUN_NUMA / CORUN_REPLICAS give: a plan that cannot
  // be made is an error before anything is printed.
  const numa::Topology topo = numa::discover(a.fake_topology ? std::vector<int>{} : a.usable);
  const numa::Plan plan = numa::plan_replicas(topo, engine::numa_request(cfg));
  std::printf("cpu          %s (nproc %d)\n", machine::cpu_model().c_str(), machine::nproc());
  std::printf("topology     %s\n", machine::topology_summary().c_str());
  std::printf("affinity     %s (process mask)\n", machine::cpu_list(a.affinity).c_str());
  std::string cg = a.has_cgroup_cpuset
                       ? "cpuset " + machine::cpu_list(a.cgroup_cpuset) + " (" + a.cgroup_cpuset_file + ")"
                       : std::string("no cpuset");
  char quota[64];
  std::snprintf(quota, sizeof(quota), "%.2f", a.cpu_quota);
  cg += a.cpu_quota > 0 ? std::string(", cpu quota ") + quota + " cpus (" + a.cpu_quota_file + ")" : ", no cpu quota";
  std::printf("cgroup       %s\n", cg.c_str());
  for (const auto& n : a.notes) std::printf("cgroup       note: %s\n", n.c_str());
  std::printf("allocation   %s on cpus %s%s\n", plural(a.workers, "worker", "workers").c_str(),
              machine::cpu_list(a.usable).c_str(),
              a.fake_topology        ? " (fake topology: not applied)"
              : a.limited_by.empty() ? " (the whole machine)"
                                     : (" (limited by the " + a.limited_by + ")").c_str());

  const auto cpu_domains = topo.cpu_domains();
  std::printf("numa         %s with CPUs (of %s; %s)\n",
              plural(static_cast<long>(cpu_domains.size()), "domain", "domains").c_str(),
              plural(static_cast<long>(topo.domains.size()), "NUMA node", "NUMA nodes").c_str(), topo.source.c_str());
  for (const auto& line : topo.describe()) std::printf("  %s\n", line.c_str());
  std::printf("replicas     %s\n", numa::describe(plan).c_str());
  // corun train plans with the training default (a replica per domain when there are several).
  numa::Request training = engine::numa_request(cfg);
  training.replicate_by_default = true;
  const numa::Plan train_plan = numa::plan_replicas(topo, training);
  if (train_plan.replicas.size() != plan.replicas.size())
    std::printf("  corun train: %s\n", numa::describe(train_plan).c_str());

  Engine engine(cfg);
  const EngineInfo& i = engine.info();
  const std::vector<machine::WorkerBinding> bindings = machine::worker_bindings();
  std::vector<int> bound;
  for (const auto& b : bindings) bound.insert(bound.end(), b.cpu_ids.begin(), b.cpu_ids.end());
  std::sort(bound.begin(), bound.end());
  bound.erase(std::unique(bound.begin(), bound.end()), bound.end());
  const int cores_used = machine::cores_containing(bound);

  std::printf("starpu       %s, STARPU_MAXCPUS %d, STARPU_MAXNUMANODES %d\n", i.starpu_version.c_str(),
              i.starpu_maxcpus, i.starpu_maxnumanodes);
  std::printf("policy       %s (%s, from %s)\n", i.policy.c_str(), i.own_policy ? "corun" : "StarPU built-in",
              i.policy_source.c_str());
  std::printf("workers      %d CPU (from %s)\n", i.workers,
              i.workers_source == "allocation" ? "the allocation" : i.workers_source.c_str());
  for (const auto& b : bindings)
    std::printf("  worker %-3d bindid %-3d runs on cpus %s\n", b.worker, b.bindid, b.cpus.c_str());
  std::printf("cores used   %d (cpus %s, read back from the workers)\n", cores_used, machine::cpu_list(bound).c_str());
  std::printf("blas         %s, core %s, %d thread(s) per call\n", i.blas.c_str(), i.blas_core.c_str(), i.blas_threads);
  std::printf("convolution  %s\n", i.conv_kernels.c_str());
  std::printf("products     %s\n", i.gemm_kernels.c_str());
  std::printf("git          %s\n", machine::git_sha().c_str());
  const std::vector<std::string> w = warnings(a, i, bindings, cores_used);
  for (const auto& line : w) std::printf("warning      %s\n", line.c_str());
  if (w.empty()) std::printf("warnings     none\n");
  return 0;
}

}  // namespace corun::cli
