// engine/allocation.hpp — the engine's worker count and binding from the process's CPU allocation.
#pragma once

#include <corun/machine.hpp>

#include <starpu.h>

#include <string>

namespace corun::engine {

/// Before starpu_init, when the caller did not fix the worker count (Config::ncpus < 0): makes StarPU
/// bind its workers inside the affinity mask (STARPU_WORKERS_GETBIND=1, when the mask is narrower than the
/// machine and none of STARPU_WORKERS_GETBIND/CPUID/COREID is set) and, unless STARPU_NCPU is set, run one
/// worker per allocated core (`allocation`, from machine::allocation(): affinity mask and cgroup cpuset,
/// capped by the CPU quota and STARPU_MAXCPUS). Returns where the worker count comes from: "allocation",
/// "STARPU_NCPU" (the user's count, read by StarPU) or "fake topology" (HWLOC_SYNTHETIC, HWLOC_XMLFILE or
/// STARPU_HWLOC_INPUT: nothing is applied).
std::string apply_allocation(starpu_conf& conf, const machine::Allocation& allocation);

}  // namespace corun::engine
