#include "base/memory_budget.hpp"

#include "base/cgroup.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace corun {

namespace {

// The value in bytes of a "Key:   1234 kB" line of a /proc file, or a negative number when absent.
double proc_kib_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    double kib = -1;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB" && kib >= 0) return kib * 1024.0;
    return -1;
  }
  return -1;
}

}  // namespace

MemoryBudget memory_budget(const std::string& root) {
  MemoryBudget m{std::numeric_limits<double>::infinity(), "no limit found"};
  auto consider = [&](double bytes, const std::string& source) {
    if (bytes >= 0 && bytes < m.bytes) m = {bytes, source};
  };
  consider(proc_kib_field(root + "/proc/meminfo", "MemAvailable"), "MemAvailable in /proc/meminfo");
  try {
    const cgroup::Limits l = cgroup::read_limits(root);
    if (l.memory_free_bytes)
      consider(*l.memory_free_bytes, "the cgroup memory limit (" + l.memory_file + ") less its usage");
  } catch (const std::exception&) {
    // A malformed cgroup file is reported by `corun info`; here the other limits still apply.
  }
  if (root.empty()) consider(address_space_left(), "the address-space limit (ulimit -v) less what is mapped");
  return m;
}

double address_space_left() {
  // The limit counts virtual memory: what is mapped already is not available any more.
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return -1;
  const double mapped = std::max(0.0, proc_kib_field("/proc/self/status", "VmSize"));
  return std::max(0.0, static_cast<double>(as.rlim_cur) - mapped);
}

std::string human_bytes(double bytes) {
  static const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  else if (bytes >= 1024.0)  // beyond exbibytes: still a readable number
    std::snprintf(buf, sizeof buf, "%.3g %s", bytes, kUnits[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, kUnits[u]);
  return buf;
}

}  // namespace corun
