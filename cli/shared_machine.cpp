#include "cli/shared_machine.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace corun::cli {

std::vector<std::string> sharing_warnings(const machine::Allocation& allocation) {
  std::vector<std::string> w;
  for (const auto& p : machine::other_starpu_processes()) {
    std::vector<int> shared;
    std::set_intersection(p.cpus.begin(), p.cpus.end(), allocation.usable.begin(), allocation.usable.end(),
                          std::back_inserter(shared));
    if (shared.empty() && !p.cpus.empty()) continue;  // another job's cores: no contention
    w.push_back("another " + std::string(p.starpu_workers > 0 ? "StarPU" : "corun") + " process runs on cpus " +
                (p.cpus.empty() ? std::string("unknown") : machine::cpu_list(shared)) + " of this allocation: pid " +
                std::to_string(p.pid) + " (" + p.name +
                (p.starpu_workers > 0 ? ", " + std::to_string(p.starpu_workers) +
                                            (p.starpu_workers == 1 ? " worker" : " workers")
                                      : "") +
                ")");
  }
  return w;
}

bool warn_if_shared(const std::string& command, const std::string& cgroup_root, bool quiet) {
  return !quiet && warn_if_shared(command, machine::allocation(cgroup_root), quiet);
}

bool warn_if_shared(const std::string& command, const machine::Allocation& allocation, bool quiet) {
  if (quiet) return false;
  const std::vector<std::string> w = sharing_warnings(allocation);
  if (w.empty()) return false;
  const std::string more = w.size() > 1 ? ", and " + std::to_string(w.size() - 1) + " more (corun info)" : "";
  std::fprintf(stderr,
               "corun %s: warning: the cores are shared: %s%s; timings will be slower and noisier than on an idle "
               "machine\n",
               command.c_str(), w.front().c_str(), more.c_str());
  return true;
}

}  // namespace corun::cli
