#include <corun/machine.hpp>

#include "base/cgroup.hpp"
#include "base/check.hpp"
#include "base/env.hpp"
#include "base/hash.hpp"

#include <dirent.h>
#include <hwloc.h>
#include <sched.h>
#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#ifndef CORUN_GIT_SHA
#define CORUN_GIT_SHA "unknown"
#endif

namespace corun::machine {

namespace {

std::string cpuset_list(const cpu_set_t& set) {
  std::ostringstream os;
  int start = -1;
  bool first = true;
  for (int c = 0; c <= CPU_SETSIZE; ++c) {
    const bool in = c < CPU_SETSIZE && CPU_ISSET(c, &set);
    if (in && start < 0) start = c;
    if (!in && start >= 0) {
      os << (first ? "" : ",") << start;
      if (c - 1 > start) os << "-" << c - 1;
      first = false;
      start = -1;
    }
  }
  return os.str();
}

std::string bytes(hwloc_uint64_t b) {
  std::ostringstream os;
  if (b >= (1ULL << 20)) os << (b >> 20) << " MiB";
  else os << (b >> 10) << " KiB";
  return os.str();
}

}  // namespace

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(line.find_first_not_of(" \t", p + 1));
    }
  return "unknown";
}

int nproc() { return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)); }

std::string affinity_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "unknown";
  return cpuset_list(set);
}

std::string topology_summary() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return "hwloc unavailable";
  hwloc_topology_load(topo);
  std::ostringstream os;
  auto count = [&](hwloc_obj_type_t t) { return hwloc_get_nbobjs_by_type(topo, t); };
  os << count(HWLOC_OBJ_PACKAGE) << " package(s), " << count(HWLOC_OBJ_NUMANODE) << " NUMA node(s), "
     << count(HWLOC_OBJ_CORE) << " core(s), " << count(HWLOC_OBJ_PU) << " PU(s)";
  const hwloc_obj_type_t caches[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE};
  const char* names[] = {"L3", "L2", "L1d"};
  for (int i = 0; i < 3; ++i) {
    const int n = count(caches[i]);
    if (n <= 0) continue;
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, caches[i], 0);
    os << ", " << n << "x " << names[i] << " " << bytes(o->attr->cache.size);
  }
  hwloc_topology_destroy(topo);
  return os.str();
}

int numa_nodes() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 1;
  hwloc_topology_load(topo);
  const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  hwloc_topology_destroy(topo);
  return n > 0 ? n : 1;
}

namespace {
std::mutex g_bind_mutex;
void record_binding(void* arg) {
  auto* out = static_cast<std::vector<WorkerBinding>*>(arg);
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  const int w = starpu_worker_get_id();
  std::vector<int> ids;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) ids.push_back(c);
  std::lock_guard<std::mutex> lock(g_bind_mutex);
  out->push_back(WorkerBinding{w, starpu_worker_get_bindid(w), cpuset_list(set), ids});
}
}  // namespace

std::string cpu_list(const std::vector<int>& cpus) { return cgroup::format_cpu_list(cpus); }

namespace {
std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}
bool covers(const std::vector<int>& set, const std::vector<int>& all) {
  return std::includes(set.begin(), set.end(), all.begin(), all.end());
}
std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::string s, line;
  while (std::getline(in, line)) s += line + "\n";
  return s;
}
}  // namespace

Allocation allocation(const std::string& root) {
  Allocation a;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) a.affinity.push_back(c);
  } else {
    a.notes.push_back("sched_getaffinity failed: using every online CPU");
  }
  // `root` (Config::cgroup_root, CORUN_CGROUP_ROOT): a directory standing in for / when reading cgroup
  // information (tests).
  if (!root.empty()) {
    DIR* d = opendir(root.c_str());
    CORUN_CHECK(d != nullptr, Status::invalid_config, "CORUN_CGROUP_ROOT='" << root << "' is not a readable directory");
    closedir(d);
  }
  const cgroup::Limits limits = cgroup::read_limits(root);
  a.notes.insert(a.notes.end(), limits.notes.begin(), limits.notes.end());
  if (limits.cpuset) {
    a.has_cgroup_cpuset = true;
    a.cgroup_cpuset = *limits.cpuset;
    a.cgroup_cpuset_file = limits.cpuset_file;
  }
  if (limits.quota_cpus) {
    a.cpu_quota = *limits.quota_cpus;
    a.cpu_quota_file = limits.quota_file;
    a.quota_workers = std::max(1, static_cast<int>(std::ceil(*limits.quota_cpus - 1e-9)));
  }
  a.machine_cpus = cgroup::parse_cpu_list(read_small_file("/sys/devices/system/cpu/online"),
                                          "/sys/devices/system/cpu/online");
  if (a.machine_cpus.empty())
    for (int c = 0; c < nproc(); ++c) a.machine_cpus.push_back(c);
  if (a.affinity.empty()) a.affinity = a.machine_cpus;
  a.usable = a.has_cgroup_cpuset ? intersect(a.affinity, a.cgroup_cpuset) : a.affinity;
  a.fake_topology = env::get("HWLOC_SYNTHETIC") || env::get("HWLOC_XMLFILE") || env::get("STARPU_HWLOC_INPUT");

  // Cores with a usable CPU, from hwloc (the topology StarPU binds by). A fake topology's PU numbers say
  // nothing about this machine: every core counts then, and the engine applies nothing.
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0) {
    if (hwloc_topology_load(topo) == 0) {
      hwloc_bitmap_t usable = hwloc_bitmap_alloc();
      for (int c : a.usable) hwloc_bitmap_set(usable, static_cast<unsigned>(c));
      const int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
      for (int i = 0; i < ncores; ++i) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
        if (a.fake_topology || hwloc_bitmap_intersects(core->cpuset, usable)) ++a.cores;
      }
      hwloc_bitmap_free(usable);
    }
    hwloc_topology_destroy(topo);
  }
  if (a.cores == 0 && !a.fake_topology) {
    a.cores = static_cast<int>(a.usable.size());  // hwloc without cores: one per usable CPU
    a.notes.push_back("hwloc found no core with a usable CPU: counting CPUs instead");
  }
  CORUN_CHECK(a.cores > 0 || a.fake_topology, Status::invalid_config,
              "no usable CPU: the affinity mask (" << cpu_list(a.affinity) << ") and the cgroup cpuset ("
                                                   << cpu_list(a.cgroup_cpuset) << ", " << a.cgroup_cpuset_file
                                                   << ") have no CPU in common");
  a.workers = a.quota_workers > 0 ? std::min(a.cores, a.quota_workers) : a.cores;

  std::vector<std::string> why;
  if (!a.fake_topology) {
    if (!covers(a.affinity, a.machine_cpus)) why.push_back("affinity mask");
    if (a.has_cgroup_cpuset && !covers(a.cgroup_cpuset, a.machine_cpus)) why.push_back("cgroup cpuset");
    if (a.quota_workers > 0 && a.quota_workers < a.cores) why.push_back("CPU quota");
  }
  for (const auto& w : why) a.limited_by += (a.limited_by.empty() ? "" : ", ") + w;
  return a;
}

int cores_containing(const std::vector<int>& cpus) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 0;
  int n = 0;
  if (hwloc_topology_load(topo) == 0) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int c : cpus) hwloc_bitmap_set(set, static_cast<unsigned>(c));
    const int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    for (int i = 0; i < ncores; ++i)
      if (hwloc_bitmap_intersects(hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(i))->cpuset, set))
        ++n;
    hwloc_bitmap_free(set);
  }
  hwloc_topology_destroy(topo);
  return n;
}

namespace {
// The CPUs a /proc status file (a process's or one thread's) allows; empty for a thread that went away or a
// format we do not know.
std::vector<int> cpus_allowed(const std::string& status_file) {
  std::ifstream status(status_file);
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      try {
        return cgroup::parse_cpu_list(line.substr(18), status_file);
      } catch (const Error&) {
        return {};
      }
    }
  return {};
}

// The command name of the corun program (/proc/PID/comm), not a policy: a corun process counts as another
// tenant even before its StarPU workers exist.
constexpr const char* kProgramName = "corun";

// StarPU 1.3 names its CPU worker threads "CPU <n>" (src/drivers/cpu/driver_cpu.c).
bool is_starpu_cpu_worker(const std::string& comm) {
  return comm.size() > 4 && comm.rfind("CPU ", 0) == 0 &&
         std::all_of(comm.begin() + 4, comm.end(), [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

std::vector<OtherProcess> other_starpu_processes() {
  std::vector<OtherProcess> out;
  const int self = static_cast<int>(getpid());
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self) continue;
    const std::string dir = std::string("/proc/") + e->d_name;
    OtherProcess p;
    p.pid = static_cast<int>(pid);
    std::getline(std::ifstream(dir + "/comm"), p.name);
    // Where the process computes is where its worker threads may run, each bound to its own CPU by StarPU:
    // the union of their masks. The process's own mask (its main thread's) is only the fallback for a process
    // without workers: the main thread's mask says nothing about the workers once they are bound, and a
    // library may change it (CI saw a corun started under `taskset -c 0` reported on cpu 1).
    std::vector<int> worker_cpus;
    if (DIR* tasks = opendir((dir + "/task").c_str())) {
      while (dirent* t = readdir(tasks)) {
        if (t->d_name[0] == '.') continue;
        const std::string task = dir + "/task/" + t->d_name;
        std::string comm;
        std::getline(std::ifstream(task + "/comm"), comm);
        if (!is_starpu_cpu_worker(comm)) continue;
        ++p.starpu_workers;
        for (int c : cpus_allowed(task + "/status")) worker_cpus.push_back(c);
      }
      closedir(tasks);
    }
    if (p.name != kProgramName && p.starpu_workers == 0) continue;
    std::sort(worker_cpus.begin(), worker_cpus.end());
    worker_cpus.erase(std::unique(worker_cpus.begin(), worker_cpus.end()), worker_cpus.end());
    p.cpus = worker_cpus.empty() ? cpus_allowed(dir + "/status") : worker_cpus;
    out.push_back(p);
  }
  closedir(proc);
  std::sort(out.begin(), out.end(), [](const OtherProcess& a, const OtherProcess& b) { return a.pid < b.pid; });
  return out;
}

std::vector<WorkerBinding> worker_bindings() {
  std::vector<WorkerBinding> out;
  starpu_execute_on_each_worker(record_binding, &out, STARPU_CPU);
  std::sort(out.begin(), out.end(), [](const WorkerBinding& a, const WorkerBinding& b) { return a.worker < b.worker; });
  return out;
}

std::string git_sha() { return CORUN_GIT_SHA; }

std::string machine_key() {
  // FNV-1a of what makes two machines time kernels alike: CPU model and topology (not the hostname, so
  // the identical nodes of a cluster share one set of perfmodels).
  const std::string what = cpu_model() + "|" + topology_summary();
  const uint64_t h = hash::fnv1a(what, hash::kFnvShortBasis);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "corun-%012llx", static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

}  // namespace corun::machine
