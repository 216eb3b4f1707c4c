// engine/replicas.hpp — the engine's side of NUMA replicas (docs/numa.md): the plan checked before StarPU
// starts, one scheduling context per replica after, and the memory node each replica's tensors live on.
#pragma once

#include "numa/replica_plan.hpp"
#include "sched/registry.hpp"

#include <corun/engine.hpp>

#include <starpu.h>

#include <cstdint>
#include <string>
#include <vector>

namespace corun::engine {

/// What Config asks of the replica plan (CORUN_NUMA, CORUN_REPLICAS, Config::replicate_by_default).
numa::Request numa_request(const Config& config);

/// Before starpu_init: plans the replicas `request` asks for over the NUMA domains of `usable` CPUs (empty:
/// the whole topology, for fake topologies) and checks that this StarPU and `policy` can run them. Sets
/// STARPU_USE_NUMA=1 when replicas live on more than one domain (unless the user set it).
numa::Plan plan_numa(const std::vector<int>& usable, const sched::ResolvedPolicy& policy, bool quiet,
                     const numa::Request& request);

/// The plan alone (no check of StarPU or the policy, no side effect): how many replicas an Engine will run.
numa::Plan plan_numa_only(const std::vector<int>& usable, const numa::Request& request);

/// One replica's share of the machine once StarPU runs.
struct ReplicaPlace {
  unsigned ctx = 0;             ///< its scheduling context (0, the global one, when there is one replica)
  std::vector<int> workers;     ///< its CPU workers (hwloc order)
  int memory_node = 0;          ///< StarPU memory node of its home domain (STARPU_MAIN_RAM without NUMA nodes)
  int home_os_index = 0;        ///< the home domain's OS NUMA number
};

/// After starpu_init: splits the CPU workers (hwloc order) over the replicas in proportion to their CPUs and
/// creates one context per replica running `policy` (corun's own policy struct, or a built-in's name). One
/// replica: the global context, nothing created.
std::vector<ReplicaPlace> place_replicas(const numa::Plan& plan, starpu_sched_policy* own_policy,
                                         const std::string& policy_name);

/// One solver over several domains (off, interleave): the index of the domain (in plan.domain_cpus' order)
/// each worker runs on, indexed by StarPU worker id; `solver` is the one place (all CPU workers).
std::vector<int> worker_domains(const numa::Plan& plan, const ReplicaPlace& solver);
/// The domain index of OS CPU `cpu` in a one-solver plan (0 when the CPU is not the plan's: fake topologies).
int domain_of_cpu(const numa::Plan& plan, int cpu);
/// Bytes `task` reads (its R and RW buffers).
uint64_t read_bytes(const starpu_task* task);

/// Bytes `task` reads (R or RW buffers) from data homed on another memory node than `memory_node`.
double remote_read_bytes(const starpu_task* task, int memory_node);

}  // namespace corun::engine
