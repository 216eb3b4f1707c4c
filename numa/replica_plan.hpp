// numa/replica_plan.hpp — how many solver replicas run, on which cores and with which home domain, and the
// fixed tree in which their gradients meet (NUMA-Caffe, seed 004). Plain C++: decided before StarPU starts.
// What the user asks for (a Request, from the engine's Config):
//
//   CORUN_NUMA=off|replicate|interleave   default: replicate when the caller trains with one graph per
//                                          replica (corun train) and there is more than one domain with
//                                          CPUs, else off (one solver: Engine::run, inference)
//   CORUN_REPLICAS=N                       force N replicas on any machine (tests on one-domain machines,
//                                          sub-NUMA splits); implies replicate
#pragma once

#include "numa/topology.hpp"

#include <string>
#include <vector>

namespace corun::numa {

enum class Mode { off, replicate, interleave };
const char* mode_name(Mode m);

/// What the user asked for. The engine fills it from its Config (which parses CORUN_NUMA and CORUN_REPLICAS
/// strictly); nothing here reads the environment.
struct Request {
  Mode mode = Mode::off;
  bool mode_given = false;  ///< CORUN_NUMA was set
  int replicas = 0;         ///< CORUN_REPLICAS, 0 when unset
  /// Set by the caller, not the environment: it can run replicas (it builds one graph per replica), so an
  /// unset CORUN_NUMA means a replica per domain with CPUs when there are several.
  bool replicate_by_default = false;
};

struct Replica {
  int index = 0;              ///< 0 is the root of the reduction tree (it applies the update)
  int home_os_index = -1;     ///< NUMA node its tensors live on
  std::vector<int> cpus;      ///< OS CPU numbers its workers run on (contiguous in the domain)
  std::vector<int> children;  ///< replicas whose gradient sums it adds to its own, in this order
  int parent = -1;            ///< -1 for the root
};

struct Plan {
  Mode mode = Mode::off;
  std::string why;                    ///< how the mode and count were chosen, for the engine's config line
  std::vector<Replica> replicas;      ///< one entry in modes off and interleave
  std::vector<int> interleave_nodes;  ///< interleave: the OS NUMA nodes pages are spread over
  /// off and interleave: how many of the one solver's CPUs (replicas[0].cpus, in this order) each domain
  /// with CPUs holds, so the engine knows which domain every worker runs on (remote-byte accounting).
  std::vector<int> domain_cpus;
  /// Planned on this machine's topology, not a fake one (HWLOC_SYNTHETIC, ...): only then do its OS node
  /// numbers exist to move pages to.
  bool real_topology = true;

  /// Replicas live on more than one NUMA domain (then tensors get homes and pages move).
  bool spans_several_domains() const;
};

/// Decides the plan. Replicas go to the domains with CPUs in order, as evenly as possible; a domain with
/// several replicas splits its CPUs into contiguous groups. Errors (corun::Error, saying how to fix it):
/// replicas with mode off or interleave, more replicas than usable CPUs, no usable CPU at all.
/// `arity` is the reduction tree's fan-in (>= 2).
Plan plan_replicas(const Topology& topo, const Request& req, int arity = 2);

/// The n-ary reduction tree over replicas 0..n-1 in heap order: the parent of r is (r - 1) / arity, the
/// children of r are r*arity+1 .. r*arity+arity. Reductions follow it bottom-up, each parent adding its
/// children in increasing index order, so the summation order never depends on timing.
void link_reduction_tree(std::vector<Replica>& replicas, int arity);

/// "replicate, 2 replicas (node 0: CPUs 0-3; node 1: CPUs 4-7), tree arity 2" and the like.
std::string describe(const Plan& plan);

}  // namespace corun::numa
