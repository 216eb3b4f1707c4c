// base/memory_budget.hpp — how many bytes this process may still allocate: what `corun train` compares a
// model's estimated size with before it builds anything (a --seq 999999999 must be refused at once, not
// found out by the kernel's OOM killer after minutes of growth).
//
//   corun::MemoryBudget m = corun::memory_budget();   // m.bytes, m.source ("MemAvailable in /proc/meminfo")
#pragma once

#include <string>

namespace corun {

struct MemoryBudget {
  double bytes = 0;    ///< the smallest of the limits below (infinity when none could be read)
  std::string source;  ///< which limit that is, for messages: "MemAvailable in /proc/meminfo", "ulimit -v", ...
};

/// The smallest of: MemAvailable in `root`/proc/meminfo, the cgroup memory limit minus its usage, and the
/// address-space limit (RLIMIT_AS, `ulimit -v`) minus this process's current size (`root`/proc/self/status).
/// Unreadable files leave their limit out. `root` ("" = the real system) lets tests use a fake tree.
MemoryBudget memory_budget(const std::string& root = "");

/// The address-space limit (RLIMIT_AS, `ulimit -v`) less what this process has mapped (VmSize); -1 when
/// there is no limit.
double address_space_left();

/// "1.5 GiB", "12.0 TiB", "800 KiB": a byte count for a message.
std::string human_bytes(double bytes);

}  // namespace corun
