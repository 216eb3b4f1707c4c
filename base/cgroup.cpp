#include "base/cgroup.hpp"

#include "base/check.hpp"
#include "base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace corun::cgroup {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

// The whole file, or nothing when it cannot be opened (a missing cgroup file is normal).
std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in.good()) return std::nullopt;
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// One hierarchy that holds a controller: where it is mounted and where this process sits in it.
struct Hierarchy {
  int version = 0;        // 1 or 2
  std::string mount;      // mount point, e.g. /sys/fs/cgroup/cpuset
  std::string dir;        // the process's cgroup directory under `mount`
};

// Mount points of cgroup file systems, from /proc/self/mountinfo:
//   36 35 98:0 /root /mnt/point rw,noatime master:1 - cgroup cgroup rw,cpuset
// fields: id, parent, major:minor, root, mount point, options, optional fields..., "-", fstype, source, super options.
struct Mount {
  int version;
  std::string root, point;
  std::vector<std::string> controllers;  // v1: from the super options
};

std::vector<Mount> cgroup_mounts(const std::string& mountinfo) {
  std::vector<Mount> out;
  std::istringstream in(mountinfo);
  for (std::string line; std::getline(in, line);) {
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const auto pre = split(line.substr(0, dash), ' ');
    std::istringstream post(line.substr(dash + 3));
    std::string fstype, source, super;
    post >> fstype >> source >> super;
    if (pre.size() < 5 || (fstype != "cgroup" && fstype != "cgroup2")) continue;
    Mount m{fstype == "cgroup2" ? 2 : 1, pre[3], pre[4], {}};
    if (m.version == 1) m.controllers = split(super, ',');
    out.push_back(m);
  }
  return out;
}

// The cgroup directory of a process at `path` (from /proc/self/cgroup) in a hierarchy mounted at
// `point` whose root is `root` (not "/" when the mount shows only a subtree, e.g. in a container).
std::string cgroup_dir(const std::string& point, const std::string& root, const std::string& path) {
  if (root == "/" || root.empty()) return path == "/" ? point : point + path;
  if (path == root) return point;
  if (path.rfind(root + "/", 0) == 0) return point + path.substr(root.size());
  return point;  // a cgroup namespace: the process sees its own cgroup as the mount's root
}

// The hierarchy that holds `controller` ("cpuset" or "cpu"): a v1 hierarchy with that controller, else v2.
std::optional<Hierarchy> find_hierarchy(const std::string& controller, const std::vector<Mount>& mounts,
                                        const std::string& proc_cgroup) {
  std::string v2_path;
  std::vector<std::pair<std::vector<std::string>, std::string>> v1_paths;  // controllers, path
  std::istringstream in(proc_cgroup);
  for (std::string line; std::getline(in, line);) {
    // "hierarchy-id:controller-list:path"; the path may contain ':'.
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string id = line.substr(0, a), list = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (id == "0" && list.empty())
      v2_path = path;
    else
      v1_paths.emplace_back(split(list, ','), path);
  }
  for (const auto& [controllers, path] : v1_paths) {
    if (std::find(controllers.begin(), controllers.end(), controller) == controllers.end()) continue;
    for (const Mount& m : mounts)
      if (m.version == 1 && std::find(m.controllers.begin(), m.controllers.end(), controller) != m.controllers.end())
        return Hierarchy{1, m.point, cgroup_dir(m.point, m.root, path)};
  }
  if (!v2_path.empty())
    for (const Mount& m : mounts)
      if (m.version == 2) return Hierarchy{2, m.point, cgroup_dir(m.point, m.root, v2_path)};
  return std::nullopt;
}

// Directories from `dir` up to `mount`, deepest first.
std::vector<std::string> levels(const std::string& mount, std::string dir) {
  std::vector<std::string> out;
  while (true) {
    out.push_back(dir);
    if (dir == mount || dir.size() <= mount.size()) break;
    const auto slash = dir.rfind('/');
    if (slash == std::string::npos || slash == 0) break;
    dir = dir.substr(0, slash);
  }
  return out;
}

// A byte count from a cgroup memory file; nothing for "max" (v2) or v1's "no limit" (close to 2^63).
std::optional<double> memory_bytes(const std::string& text, const std::string& file) {
  const std::string t = trim(text);
  if (t == "max") return std::nullopt;
  const auto v = parse::integer(t);
  CORUN_CHECK(v && *v >= 0, Status::io_error, file << ": '" << t << "' is not 'max' or a byte count");
  if (*v >= (1L << 62)) return std::nullopt;
  return static_cast<double>(*v);
}

// The memory limit minus the usage, the smallest over the levels (each level caps its subtree).
void read_memory(const std::string& root, const std::vector<Mount>& mounts, const std::string& proc_cgroup,
                 Limits& out) {
  const auto h = find_hierarchy("memory", mounts, proc_cgroup);
  if (!h) {
    out.notes.push_back("no memory controller mounted");
    return;
  }
  const char* limit_name = h->version == 2 ? "memory.max" : "memory.limit_in_bytes";
  const char* usage_name = h->version == 2 ? "memory.current" : "memory.usage_in_bytes";
  for (const std::string& dir : levels(h->mount, h->dir)) {
    const std::string file = dir + "/" + limit_name;
    const auto limit_text = slurp(root + file);
    const auto usage_text = slurp(root + dir + "/" + usage_name);
    if (!limit_text || !usage_text) continue;  // the root cgroup has no limit file
    const auto limit = memory_bytes(*limit_text, file);
    const auto usage = memory_bytes(*usage_text, dir + "/" + usage_name);
    if (!limit || !usage) continue;
    const double free = std::max(0.0, *limit - *usage);
    if (!out.memory_free_bytes || free < *out.memory_free_bytes) {
      out.memory_free_bytes = free;
      out.memory_file = file;
    }
  }
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text, const std::string& what) {
  std::vector<int> cpus;
  const std::string t = trim(text);
  if (t.empty()) return cpus;
  auto bad = [&](const std::string& why) {
    detail::fail(Status::io_error, what + ": '" + t + "' is not a CPU list like 0-3,8 (" + why + ")");
  };
  for (const std::string& part : split(t, ',')) {
    const auto dash = part.find('-');
    const auto lo = parse::integer(part.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : parse::integer(part.substr(dash + 1));
    if (!lo || !hi) bad("'" + part + "' is not a number or range");
    if (*lo < 0 || *hi < *lo) bad("range '" + part + "' is empty or negative");
    if (*hi >= (1 << 20)) bad("CPU " + std::to_string(*hi) + " is implausible");
    for (long c = *lo; c <= *hi; ++c) cpus.push_back(static_cast<int>(c));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::ostringstream os;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    os << (i ? "," : "") << cpus[i];
    if (j > i) os << "-" << cpus[j];
    i = j + 1;
  }
  return os.str();
}

std::optional<double> parse_cpu_max(const std::string& text, const std::string& what) {
  const auto parts = split(trim(text), ' ');
  CORUN_CHECK(parts.size() == 2, Status::io_error, what << ": '" << trim(text) << "' is not '<quota|max> <period>'");
  const auto period = parse::integer(parts[1]);
  CORUN_CHECK(period && *period > 0, Status::io_error, what << ": period '" << parts[1] << "' is not a positive integer");
  if (parts[0] == "max") return std::nullopt;
  const auto quota = parse::integer(parts[0]);
  CORUN_CHECK(quota && *quota > 0, Status::io_error, what << ": quota '" << parts[0] << "' is not 'max' or a positive integer");
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<double> parse_cfs_quota(const std::string& quota_text, const std::string& period_text,
                                      const std::string& what) {
  const auto quota = parse::integer(trim(quota_text));
  const auto period = parse::integer(trim(period_text));
  CORUN_CHECK(quota && (*quota == -1 || *quota > 0), Status::io_error,
              what << ": cpu.cfs_quota_us '" << trim(quota_text) << "' is not -1 or a positive integer");
  CORUN_CHECK(period && *period > 0, Status::io_error,
              what << ": cpu.cfs_period_us '" << trim(period_text) << "' is not a positive integer");
  if (*quota == -1) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

Limits read_limits(const std::string& root) {
  Limits out;
  const auto proc_cgroup = slurp(root + "/proc/self/cgroup");
  const auto mountinfo = slurp(root + "/proc/self/mountinfo");
  if (!proc_cgroup || !mountinfo) {
    out.notes.push_back("no /proc/self/cgroup or /proc/self/mountinfo: control groups not read");
    return out;
  }
  const std::vector<Mount> mounts = cgroup_mounts(*mountinfo);

  if (const auto h = find_hierarchy("cpuset", mounts, *proc_cgroup)) {
    // v2 exposes the effective set in every cgroup that has the controller (always the root); v1 in
    // every cgroup, as cpuset.effective_cpus (older kernels: only cpuset.cpus).
    const std::vector<std::string> names = h->version == 2 ? std::vector<std::string>{"cpuset.cpus.effective"}
                                                           : std::vector<std::string>{"cpuset.effective_cpus", "cpuset.cpus"};
    for (const std::string& dir : levels(h->mount, h->dir)) {
      for (const std::string& name : names) {
        const std::string file = dir + "/" + name;
        if (const auto text = slurp(root + file)) {
          out.cpuset = parse_cpu_list(*text, file);
          out.cpuset_file = file;
          break;
        }
      }
      if (out.cpuset) break;
    }
    if (!out.cpuset) out.notes.push_back("no readable cpuset file under " + h->dir);
  } else {
    out.notes.push_back("no cpuset controller mounted");
  }

  if (const auto h = find_hierarchy("cpu", mounts, *proc_cgroup)) {
    for (const std::string& dir : levels(h->mount, h->dir)) {
      std::optional<double> q;
      std::string file;
      if (h->version == 2) {
        file = dir + "/cpu.max";
        const auto text = slurp(root + file);
        if (!text) continue;  // the root cgroup has no cpu.max
        q = parse_cpu_max(*text, file);
      } else {
        file = dir + "/cpu.cfs_quota_us";
        const auto quota = slurp(root + file);
        const auto period = slurp(root + dir + "/cpu.cfs_period_us");
        if (!quota || !period) continue;
        q = parse_cfs_quota(*quota, *period, file);
      }
      if (q && (!out.quota_cpus || *q < *out.quota_cpus)) {
        out.quota_cpus = q;
        out.quota_file = file;
      }
    }
  } else {
    out.notes.push_back("no cpu controller mounted");
  }
  read_memory(root, mounts, *proc_cgroup, out);
  return out;
}

}  // namespace corun::cgroup
