// corun/machine.hpp — what this machine and process are: for `corun info`, result headers and JSON.
#pragma once

#include <string>
#include <vector>

namespace corun::machine {

/// "AMD EPYC" (model name from /proc/cpuinfo), or "unknown".
std::string cpu_model();
/// Online processors of the machine.
int nproc();
/// The process's CPU affinity mask as a list, e.g. "0-1".
std::string affinity_list();
/// hwloc topology in one line: "1 package, 1 NUMA node, 2 cores, 2 PUs, L3 32 MiB, L2 512 KiB, L1d 48 KiB".
std::string topology_summary();
/// NUMA nodes hwloc reports.
int numa_nodes();

/// Where one StarPU CPU worker actually runs, read back from inside the worker thread.
struct WorkerBinding {
  int worker = -1;
  int bindid = -1;           ///< StarPU's logical binding id
  std::string cpus;          ///< sched_getaffinity of the worker thread, as a list
};
/// Needs a live Engine (StarPU initialised); runs a tiny function on every CPU worker.
std::vector<WorkerBinding> worker_bindings();

/// "corun-<12 hex digits>": a hash of cpu_model() and topology_summary(). The engine uses it as
/// STARPU_HOSTNAME, so perfmodels are shared by identical machines and never by different ones.
std::string machine_key();

/// Short git revision of the source tree corun was built from ("unknown" outside git).
std::string git_sha();

}  // namespace corun::machine
