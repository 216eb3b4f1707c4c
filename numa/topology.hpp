// numa/topology.hpp — NUMA domains as corun uses them: hwloc's NUMA nodes, restricted to the CPUs the process
// may use (its batch allocation), each with its cores and the caches above them.
//
// A domain "has CPUs" when some usable CPU is local to it and to no finer NUMA node. hwloc attaches several NUMA
// nodes to one parent when memory of different kinds shares the same cores (DDR and high-bandwidth memory in
// flat mode, CXL expanders), and attaches a package-wide node above sub-NUMA clusters. Those nodes are listed
// (their memory can still be used) but own no CPU: every CPU belongs to the finest node that contains it, the
// first in hwloc's logical order among equals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace corun::numa {

struct Domain {
  int os_index = -1;          ///< the OS's NUMA node number (numactl, /sys/devices/system/node/nodeN)
  int logical_index = -1;     ///< hwloc's logical index
  uint64_t memory_bytes = 0;  ///< local memory hwloc reports (0 when unknown)
  std::string subtype;        ///< hwloc subtype, e.g. "MCDRAM", "HBM" ("" when none)
  std::vector<int> cpus;      ///< usable CPUs (OS numbering) that belong to this domain
  std::vector<int> cores;     ///< hwloc logical indices of the cores holding those CPUs
  int machine_cpus = 0;       ///< CPUs of the node on the whole machine, usable or not
  std::string no_cpu_reason;  ///< why `cpus` is empty: "memory only (shares CPUs 0-3 with node 0)",
                              ///< "outside the allocation"; "" when it has CPUs
  bool has_cpus() const { return !cpus.empty(); }
};

struct CacheLevel {
  int depth = 0;          ///< 1 for L1d, 2, 3
  uint64_t bytes = 0;     ///< size of one cache of that level
  int cores_sharing = 0;  ///< cores below one cache of that level
};

struct Topology {
  std::vector<Domain> domains;     ///< every NUMA node hwloc reports, in logical order
  std::vector<CacheLevel> caches;  ///< data/unified caches from L1 upwards (first instance of each level)
  int usable_cpus = 0;             ///< CPUs of the allocation found in the topology
  std::string source;              ///< "this machine" or the fake topology's variable (HWLOC_SYNTHETIC=...)

  /// Domains with CPUs, in logical order: the ones that can hold a replica.
  std::vector<const Domain*> cpu_domains() const;
  /// One line per domain, for `corun info`.
  std::vector<std::string> describe() const;
};

/// Loads the topology hwloc reports for this process (it honours HWLOC_SYNTHETIC, HWLOC_XMLFILE and
/// HWLOC_FSROOT), restricted to `usable` CPUs (OS numbering); an empty list means every CPU of the topology
/// (used with fake topologies, whose CPUs are not the real mask's). Throws corun::Error if hwloc fails.
Topology discover(const std::vector<int>& usable);

/// The same from a synthetic description ("pack:2 [numa] [numa(memory=16GB)] core:4 pu:1"): for tests and
/// for planning a machine one does not have. Throws corun::Error naming the description if hwloc rejects it.
Topology discover_synthetic(const std::string& description, const std::vector<int>& usable);

}  // namespace corun::numa
