#include "cli/co_tenancy.hpp"

#include <corun/machine.hpp>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

namespace corun::cli {

bool CoTenancyWatch::check() {
  if (warned_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (scanned_ && now - last_ < kInterval) return false;
  scanned_ = true;
  last_ = now;
  std::vector<int> shared;  // the allocation's CPUs that other processes run on
  std::string who;          // "pid 123 (corun), pid 456 (python3)"
  bool starpu = false;
  for (const auto& p : machine::other_starpu_processes()) {
    std::vector<int> both;
    std::set_intersection(p.cpus.begin(), p.cpus.end(), usable_.begin(), usable_.end(), std::back_inserter(both));
    if (both.empty() && !p.cpus.empty()) continue;  // another job's cores: no contention
    if (p.cpus.empty()) both = usable_;             // affinity unknown: assume all of ours
    std::vector<int> merged;
    std::set_union(shared.begin(), shared.end(), both.begin(), both.end(), std::back_inserter(merged));
    shared.swap(merged);
    who += (who.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p.pid) + " (" + p.name + ")";
    starpu = starpu || p.starpu_workers > 0;
  }
  if (who.empty()) return false;
  std::fprintf(stderr,
               "corun: warning: another %s process shares cpus %s with this run (%s): teams wait on busy cores, so "
               "iterations are slower and vary; give each run its own cores (taskset, srun --cpu-bind)\n",
               starpu ? "StarPU" : "corun", machine::cpu_list(shared).c_str(), who.c_str());
  warned_ = true;
  return true;
}

}  // namespace corun::cli
