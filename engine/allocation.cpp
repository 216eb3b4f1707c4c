// The engine's share of allocation awareness (docs/batch-jobs.md, "Allocation-aware startup").
//
// StarPU 1.3 counts and binds workers over the whole hwloc topology, which hwloc restricts to the cgroup
// cpuset but not to the process's affinity mask: under `taskset -c 0` or `srun --cpu-bind` it would start a
// worker per core of the node and bind them outside the mask. STARPU_WORKERS_GETBIND=1 makes it restrict
// its topology to the calling thread's binding first (src/core/topology.c, _starpu_init_topology), and the
// worker count we pass adds the CPU quota, which StarPU does not know about.
#include "engine/allocation.hpp"

#include <corun/machine.hpp>

#include "base/env.hpp"

#include <algorithm>
#include <cstdlib>

namespace corun::engine {

std::string apply_allocation(starpu_conf& conf, const machine::Allocation& a) {
  if (a.fake_topology) return "fake topology";  // its CPU numbers are not this machine's: leave everything to StarPU
  // Workers inside the mask even when STARPU_NCPU sets their number (more than the mask's cores then
  // share them, which `corun info` reports), unless the user binds them explicitly.
  if (a.affinity != a.machine_cpus && !env::get("STARPU_WORKERS_GETBIND") && !env::get("STARPU_WORKERS_CPUID") &&
      !env::get("STARPU_WORKERS_COREID"))
    setenv("STARPU_WORKERS_GETBIND", "1", 1);
  if (env::get("STARPU_NCPU")) return "STARPU_NCPU";  // the user's explicit count; StarPU reads it itself
  conf.ncpus = std::min(a.workers, STARPU_MAXCPUS);
  return "allocation";
}

}  // namespace corun::engine
