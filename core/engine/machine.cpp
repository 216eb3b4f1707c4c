#include <corun/machine.hpp>

#include <hwloc.h>
#include <sched.h>
#include <starpu.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
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
  std::lock_guard<std::mutex> lock(g_bind_mutex);
  out->push_back(WorkerBinding{w, starpu_worker_get_bindid(w), cpuset_list(set)});
}
}  // namespace

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
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : what) h = (h ^ c) * 1099511628211ull;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "corun-%012llx", static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

}  // namespace corun::machine
