// cli/shared_machine.hpp — is this allocation visibly shared with another StarPU or corun process? `corun
// info` lists every such process as a warning; `corun train` and `serve-bench` print one line, once, so
// that a slow or noisy timing (a p99 hundreds of times the median) comes with its likely cause.
#pragma once

#include <corun/machine.hpp>

#include <string>
#include <vector>

namespace corun::cli {

/// One line per other StarPU or corun process whose CPUs overlap `allocation`'s usable CPUs (or whose CPUs
/// are unknown): "another StarPU process runs on cpus 0-1 of this allocation: pid 123 (corun, 2 workers)".
std::vector<std::string> sharing_warnings(const machine::Allocation& allocation);

/// Prints "corun <command>: warning: the cores are shared (<first line>, and N more); timings will be slower
/// and noisier than on an idle machine" to stderr when sharing_warnings finds any. `quiet` (CORUN_QUIET=1)
/// silences it, as it does the start line.
/// Returns true when it printed.
bool warn_if_shared(const std::string& command, const machine::Allocation& allocation, bool quiet);
bool warn_if_shared(const std::string& command, const std::string& cgroup_root, bool quiet);

}  // namespace corun::cli
