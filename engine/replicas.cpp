#include "engine/replicas.hpp"

#include "base/env.hpp"
#include "numa/topology.hpp"
#include "sched/toolbox/workers.hpp"

#include <corun/error.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace corun::engine {

numa::Request numa_request(const Config& config) {
  numa::Request r;
  r.mode_given = config.numa != Config::NumaMode::unset;
  switch (config.numa) {
    case Config::NumaMode::unset:
    case Config::NumaMode::off: r.mode = numa::Mode::off; break;
    case Config::NumaMode::replicate: r.mode = numa::Mode::replicate; break;
    case Config::NumaMode::interleave: r.mode = numa::Mode::interleave; break;
  }
  r.replicas = config.replicas;
  r.replicate_by_default = config.replicate_by_default;
  return r;
}

numa::Plan plan_numa_only(const std::vector<int>& usable, const numa::Request& request) {
  return numa::plan_replicas(numa::discover(usable), request);
}

numa::Plan plan_numa(const std::vector<int>& usable, const sched::ResolvedPolicy& policy, bool quiet,
                     const numa::Request& request) {
  const numa::Topology topo = numa::discover(usable);
  numa::Plan plan = numa::plan_replicas(topo, request);
  if (!quiet && plan.mode == numa::Mode::off && !request.mode_given && topo.cpu_domains().size() > 1)
    std::fprintf(stderr, "corun: note: %s\n", plan.why.c_str());
  if (plan.replicas.size() <= 1) return plan;
  // Some policies keep one global view of the workers (StarPU 1.3 documents pheft and peager as not
  // supporting several contexts); the others, ours included, keep their state per context.
  if (!policy.traits.context_per_replica)
    throw Error(Status::invalid_config, "corun: NUMA " + numa::describe(plan) + ": the policy '" + policy.name +
                                            "' does not support one scheduling context per replica; choose another "
                                            "CORUN_SCHED or set CORUN_NUMA=off");
  if (plan.spans_several_domains() && !env::get("STARPU_USE_NUMA")) {
    if (static_cast<int>(topo.domains.size()) > STARPU_MAXNUMANODES)
      throw Error(Status::invalid_config,
                  "corun: NUMA " + numa::describe(plan) + ": the machine has " + std::to_string(topo.domains.size()) +
                      " NUMA nodes but this StarPU was built for at most " + std::to_string(STARPU_MAXNUMANODES) +
                      " (STARPU_MAXNUMANODES); build corun against the source-built StarPU (scripts/setup.sh "
                      "source) or set CORUN_NUMA=off");
    setenv("STARPU_USE_NUMA", "1", 1);  // one StarPU memory node per NUMA node, so tensors can have a home
  }
  if (!quiet) std::fprintf(stderr, "corun: NUMA %s\n", numa::describe(plan).c_str());
  return plan;
}

std::vector<ReplicaPlace> place_replicas(const numa::Plan& plan, starpu_sched_policy* own_policy,
                                         const std::string& policy_name) {
  const size_t n = plan.replicas.size();
  std::vector<int> ids(static_cast<size_t>(starpu_worker_get_count()));
  const int nworkers = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids.data(), static_cast<int>(ids.size()));
  const std::vector<int> workers = sched::ordered_cpu_workers(ids.data(), static_cast<unsigned>(nworkers), "replicas");
  if (workers.size() < n)
    throw Error(Status::invalid_config, "corun: NUMA " + numa::describe(plan) + " needs a worker per replica but StarPU "
                                            "runs " + std::to_string(workers.size()) + " CPU workers");
  const bool numa_nodes = starpu_memory_nodes_get_numa_count() > 1;
  size_t total = 0;
  for (const auto& r : plan.replicas) total += r.cpus.size();

  std::vector<ReplicaPlace> places(n);
  size_t cpus_before = 0;
  for (size_t r = 0; r < n; ++r) {
    ReplicaPlace& p = places[r];
    p.home_os_index = plan.replicas[r].home_os_index;
    p.memory_node = STARPU_MAIN_RAM;
    if (numa_nodes) {
      const int node = starpu_memory_nodes_numa_devid_to_id(p.home_os_index);
      if (node < 0)
        throw Error(Status::runtime_error, "corun: StarPU has no memory node for NUMA node " +
                                               std::to_string(p.home_os_index) + " (STARPU_USE_NUMA=1)");
      p.memory_node = node;
    }
    // Workers in proportion to the replica's CPUs: with one worker per allocated core (the default) that is
    // exactly the replica's cores, since both lists are in hwloc order.
    const size_t begin = workers.size() * cpus_before / total;
    cpus_before += plan.replicas[r].cpus.size();
    const size_t end = workers.size() * cpus_before / total;
    p.workers.assign(workers.begin() + static_cast<long>(begin), workers.begin() + static_cast<long>(end));
    if (n == 1) continue;  // one solver: the global context
    const std::string name = "replica" + std::to_string(r);
    p.ctx = own_policy ? starpu_sched_ctx_create(p.workers.data(), static_cast<int>(p.workers.size()), name.c_str(),
                                                 STARPU_SCHED_CTX_POLICY_STRUCT, own_policy, 0)
                       : starpu_sched_ctx_create(p.workers.data(), static_cast<int>(p.workers.size()), name.c_str(),
                                                 STARPU_SCHED_CTX_POLICY_NAME, policy_name.c_str(), 0);
  }
  return places;
}

std::vector<int> worker_domains(const numa::Plan& plan, const ReplicaPlace& solver) {
  std::vector<int> domain(static_cast<size_t>(starpu_worker_get_count()), 0);
  const size_t nw = solver.workers.size();
  size_t total = 0;
  for (int c : plan.domain_cpus) total += static_cast<size_t>(c);
  for (size_t i = 0; i < nw; ++i) {
    // The i-th worker (hwloc order) stands for CPU position i * total / nw of the solver's CPU list, which
    // lists the domains' CPUs in order: with one worker per allocated core, exactly its own CPU.
    size_t pos = i * total / nw, d = 0;
    while (d + 1 < plan.domain_cpus.size() && pos >= static_cast<size_t>(plan.domain_cpus[d])) pos -= plan.domain_cpus[d++];
    domain[static_cast<size_t>(solver.workers[i])] = static_cast<int>(d);
  }
  return domain;
}

int domain_of_cpu(const numa::Plan& plan, int cpu) {
  const std::vector<int>& cpus = plan.replicas.front().cpus;
  const auto it = std::find(cpus.begin(), cpus.end(), cpu);
  if (it == cpus.end()) return 0;
  size_t pos = static_cast<size_t>(it - cpus.begin()), d = 0;
  while (d + 1 < plan.domain_cpus.size() && pos >= static_cast<size_t>(plan.domain_cpus[d])) pos -= plan.domain_cpus[d++];
  return static_cast<int>(d);
}

uint64_t read_bytes(const starpu_task* task) {
  uint64_t bytes = 0;
  for (int b = 0; b < task->nbuffers; ++b)
    if (STARPU_TASK_GET_MODE(task, b) & STARPU_R) bytes += starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, b));
  return bytes;
}

double remote_read_bytes(const starpu_task* task, int memory_node) {
  double bytes = 0.0;
  for (int b = 0; b < task->nbuffers; ++b) {
    const starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, b);
    if (!(mode & STARPU_R)) continue;
    starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, b);
    if (starpu_data_get_home_node(h) != memory_node) bytes += static_cast<double>(starpu_data_get_size(h));
  }
  return bytes;
}

}  // namespace corun::engine
