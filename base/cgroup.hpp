// base/cgroup.hpp — what the kernel's control groups allow this process: the cpuset, the CPU quota and the
// memory left under the memory limit.
//
//   corun::cgroup::Limits l = corun::cgroup::read_limits();      // from /proc/self/cgroup and the mounts
//   if (l.cpuset) ... *l.cpuset is e.g. {0, 1, 2, 3};  l.quota_cpus is 2.5 for "250000 100000"
//
// Both cgroup v2 (cpuset.cpus.effective, cpu.max) and v1 (cpuset.effective_cpus, cpu.cfs_quota_us /
// cpu.cfs_period_us) are read; a controller mounted as v1 is used there, otherwise the v2 hierarchy. The
// cpuset is the deepest one set on the way from the process's cgroup to the root; the quota is the
// smallest over all those levels (each level caps its subtree). Plain C++ (no hwloc, no StarPU), so the
// unit tests run it on a fake tree: every path is read under `root` ("" = the real system).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace corun::cgroup {

/// Parses a kernel CPU list ("0-3,8,10-11", whitespace around it allowed, "" = empty) into sorted,
/// distinct CPU numbers. Throws corun::Error (io_error) naming `what` for anything else.
std::vector<int> parse_cpu_list(const std::string& text, const std::string& what);
/// The inverse: "0-3,8,10-11" ("" for no CPUs).
std::string format_cpu_list(const std::vector<int>& cpus);

/// A quota in CPUs from cgroup v2's cpu.max ("max 100000" -> nothing, "150000 100000" -> 1.5). Throws
/// corun::Error (io_error) naming `what` when malformed.
std::optional<double> parse_cpu_max(const std::string& text, const std::string& what);
/// The same from cgroup v1's cpu.cfs_quota_us ("-1" = none) and cpu.cfs_period_us.
std::optional<double> parse_cfs_quota(const std::string& quota, const std::string& period, const std::string& what);

/// What the control groups allow the calling process.
struct Limits {
  std::optional<std::vector<int>> cpuset;  ///< CPUs of the effective cpuset, when a cpuset controller is found
  std::string cpuset_file;                 ///< the file it came from (without the root prefix)
  std::optional<double> quota_cpus;        ///< CPU bandwidth limit in CPUs (quota / period), when one is set
  std::string quota_file;                  ///< the file of the smallest quota
  std::optional<double> memory_free_bytes; ///< the smallest (memory limit - usage) over the levels, when a limit is set
  std::string memory_file;                 ///< the limit file of that level
  std::vector<std::string> notes;          ///< what could not be read (unreadable files are not errors)
};

/// Reads the limits of the calling process from `root` + /proc/self/cgroup, `root` + /proc/self/mountinfo and
/// the cgroup files under `root` + the mount points. Missing or unreadable files leave the field unset and
/// add a note; malformed contents throw corun::Error (io_error) naming the file.
Limits read_limits(const std::string& root = "");

}  // namespace corun::cgroup
