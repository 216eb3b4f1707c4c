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

/// The CPUs this process may use and how many StarPU workers that makes (docs/batch-jobs.md).
///
/// The usable CPUs are the calling thread's affinity mask (sched_getaffinity: taskset, srun --cpu-bind,
/// numactl) intersected with the cgroup cpuset (v2 cpuset.cpus.effective or v1 cpuset.effective_cpus:
/// SLURM's task/cgroup, containers). The engine runs one worker per core that has a usable CPU, capped by
/// the cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us; a fractional quota rounds up) and by StarPU's
/// STARPU_MAXCPUS; STARPU_NCPU still overrides the count.
struct Allocation {
  std::vector<int> affinity;         ///< CPUs of the calling thread's affinity mask (OS numbering)
  bool has_cgroup_cpuset = false;    ///< a cgroup cpuset was found
  std::vector<int> cgroup_cpuset;    ///< its CPUs
  std::string cgroup_cpuset_file;    ///< where it was read
  double cpu_quota = 0.0;            ///< cgroup CPU quota in CPUs (quota / period); 0 = no quota
  std::string cpu_quota_file;        ///< where the (smallest) quota was read
  std::vector<int> usable;           ///< affinity mask and cgroup cpuset: the CPUs corun may use
  std::vector<int> machine_cpus;     ///< every CPU hwloc sees on the machine (its allowed set)
  int cores = 0;                     ///< cores (hwloc) with at least one usable CPU
  int quota_workers = 0;             ///< ceil(cpu_quota), 0 when there is no quota
  int workers = 0;                   ///< min(cores, quota_workers if any): the worker count corun asks StarPU for
  std::string limited_by;            ///< "affinity mask", "cgroup cpuset", "CPU quota" (comma-separated) or ""
  bool fake_topology = false;        ///< HWLOC_SYNTHETIC / HWLOC_XMLFILE / STARPU_HWLOC_INPUT: not applied
  std::vector<std::string> notes;    ///< what could not be read (the allocation falls back to the mask)
};
/// Reads the allocation now (cheap: a few small files and one hwloc topology load). `cgroup_root`: a directory
/// standing in for / when reading the cgroup files (Config::cgroup_root, CORUN_CGROUP_ROOT: tests); an
/// unreadable one is an error. Empty: the real /.
Allocation allocation(const std::string& cgroup_root = "");
/// "0-3,8" for a list of CPU numbers ("" when empty).
std::string cpu_list(const std::vector<int>& cpus);

/// Cores (hwloc) that contain at least one of `cpus`.
int cores_containing(const std::vector<int>& cpus);

/// Another process on this machine that runs StarPU workers (its threads are named "CPU <n>", as StarPU
/// names them) or is a `corun`, found by scanning /proc; for oversubscription warnings.
struct OtherProcess {
  int pid = -1;
  std::string name;                  ///< /proc/<pid>/comm
  std::vector<int> cpus;             ///< where its StarPU workers may run (the union of their threads'
                                     ///< Cpus_allowed_list); the process's own mask when it has none
  int starpu_workers = 0;            ///< threads named like StarPU CPU workers
};
/// Every such process except this one (one read of /proc/<pid>/comm per process, plus its thread names).
std::vector<OtherProcess> other_starpu_processes();

/// Where one StarPU CPU worker actually runs, read back from inside the worker thread.
struct WorkerBinding {
  int worker = -1;
  int bindid = -1;           ///< StarPU's logical binding id
  std::string cpus;          ///< sched_getaffinity of the worker thread, as a list
  std::vector<int> cpu_ids;  ///< the same CPUs as numbers
};
/// Needs a live Engine (StarPU initialised); runs a tiny function on every CPU worker.
std::vector<WorkerBinding> worker_bindings();

/// "corun-<12 hex digits>": a hash of cpu_model() and topology_summary(). The engine uses it as
/// STARPU_HOSTNAME, so perfmodels are shared by identical machines and never by different ones.
std::string machine_key();

/// Short git revision of the source tree corun was built from ("unknown" outside git).
std::string git_sha();

}  // namespace corun::machine
