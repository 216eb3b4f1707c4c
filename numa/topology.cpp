#include "numa/topology.hpp"

#include "base/cgroup.hpp"
#include "base/env.hpp"

#include <corun/error.hpp>

#include <hwloc.h>

#include <algorithm>
#include <sstream>

namespace corun::numa {

namespace {

// Owns one loaded hwloc topology.
class Hwloc {
 public:
  explicit Hwloc(const std::string* synthetic) {
    if (hwloc_topology_init(&t_) != 0) throw Error(Status::runtime_error, "corun: numa: hwloc_topology_init failed");
    if (synthetic && hwloc_topology_set_synthetic(t_, synthetic->c_str()) != 0) {
      hwloc_topology_destroy(t_);
      throw Error(Status::invalid_argument, "corun: numa: hwloc rejects the synthetic topology '" + *synthetic +
                                                "' (see hwloc's synthetic syntax, e.g. \"pack:2 numa:2 core:4 pu:1\")");
    }
    if (hwloc_topology_load(t_) != 0) {
      hwloc_topology_destroy(t_);
      throw Error(Status::runtime_error,
                  "corun: numa: hwloc could not load the topology (check HWLOC_XMLFILE / HWLOC_SYNTHETIC if set)");
    }
  }
  ~Hwloc() { hwloc_topology_destroy(t_); }
  Hwloc(const Hwloc&) = delete;
  Hwloc& operator=(const Hwloc&) = delete;
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_{};
};

std::vector<int> os_cpus(hwloc_const_bitmap_t set) {
  std::vector<int> v;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) v.push_back(i);
  return v;
}

std::string bytes(uint64_t b) {
  std::ostringstream os;
  if (b >= (1ULL << 30))
    os << (b >> 30) << " GiB";
  else if (b >= (1ULL << 20))
    os << (b >> 20) << " MiB";
  else
    os << (b >> 10) << " KiB";
  return os.str();
}

Topology build(hwloc_topology_t t, const std::vector<int>& usable_list) {
  hwloc_bitmap_t usable = hwloc_bitmap_alloc();
  if (usable_list.empty())
    hwloc_bitmap_copy(usable, hwloc_topology_get_topology_cpuset(t));
  else
    for (int c : usable_list) hwloc_bitmap_set(usable, static_cast<unsigned>(c));
  hwloc_bitmap_and(usable, usable, hwloc_topology_get_topology_cpuset(t));

  Topology topo;
  topo.usable_cpus = hwloc_bitmap_weight(usable);
  const int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);

  // Finest first: a CPU belongs to the node with the smallest cpuset that contains it (ties: logical order).
  std::vector<hwloc_obj_t> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i)));
  std::vector<hwloc_obj_t> finest = nodes;
  std::stable_sort(finest.begin(), finest.end(), [](hwloc_obj_t a, hwloc_obj_t b) {
    return hwloc_bitmap_weight(a->cpuset) < hwloc_bitmap_weight(b->cpuset);
  });
  std::vector<int> owner(static_cast<size_t>(hwloc_bitmap_last(hwloc_topology_get_topology_cpuset(t)) + 1), -1);
  for (hwloc_obj_t node : finest)
    for (int c : os_cpus(node->cpuset))
      if (owner[static_cast<size_t>(c)] < 0) owner[static_cast<size_t>(c)] = static_cast<int>(node->logical_index);

  for (hwloc_obj_t node : nodes) {
    Domain d;
    d.os_index = static_cast<int>(node->os_index);
    d.logical_index = static_cast<int>(node->logical_index);
    d.memory_bytes = node->attr ? node->attr->numanode.local_memory : 0;
    d.subtype = node->subtype ? node->subtype : "";
    d.machine_cpus = hwloc_bitmap_weight(node->cpuset);
    std::vector<int> owned, shared_with;
    for (int c : os_cpus(node->cpuset)) {
      const int o = owner[static_cast<size_t>(c)];
      if (o == d.logical_index)
        owned.push_back(c);
      else if (std::find(shared_with.begin(), shared_with.end(), o) == shared_with.end())
        shared_with.push_back(o);
    }
    for (int c : owned)
      if (hwloc_bitmap_isset(usable, static_cast<unsigned>(c))) d.cpus.push_back(c);
    if (d.cpus.empty()) {
      if (owned.empty() && !shared_with.empty()) {
        std::ostringstream why;
        why << "memory only (its CPUs " << cgroup::format_cpu_list(os_cpus(node->cpuset)) << " belong to node";
        for (size_t i = 0; i < shared_with.size(); ++i)
          why << (i ? ", " : " ") << nodes[static_cast<size_t>(shared_with[i])]->os_index;
        why << ")";
        d.no_cpu_reason = why.str();
      } else if (owned.empty()) {
        d.no_cpu_reason = "memory only (no CPUs)";
      } else {
        d.no_cpu_reason = "outside the allocation (CPUs " + cgroup::format_cpu_list(owned) + ")";
      }
    }
    for (int c : d.cpus) {
      hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t, static_cast<unsigned>(c));
      hwloc_obj_t core = pu ? hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu) : nullptr;
      const int idx = core ? static_cast<int>(core->logical_index) : c;
      if (std::find(d.cores.begin(), d.cores.end(), idx) == d.cores.end()) d.cores.push_back(idx);
    }
    topo.domains.push_back(std::move(d));
  }

  const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE};
  for (int l = 0; l < 3; ++l) {
    hwloc_obj_t c = hwloc_get_obj_by_type(t, levels[l], 0);
    if (!c || !c->attr) continue;
    CacheLevel level;
    level.depth = l + 1;
    level.bytes = c->attr->cache.size;
    level.cores_sharing = std::max(1, hwloc_get_nbobjs_inside_cpuset_by_type(t, c->cpuset, HWLOC_OBJ_CORE));
    topo.caches.push_back(level);
  }
  hwloc_bitmap_free(usable);
  return topo;
}

}  // namespace

std::vector<const Domain*> Topology::cpu_domains() const {
  std::vector<const Domain*> v;
  for (const Domain& d : domains)
    if (d.has_cpus()) v.push_back(&d);
  return v;
}

std::vector<std::string> Topology::describe() const {
  std::vector<std::string> lines;
  for (const Domain& d : domains) {
    std::ostringstream os;
    os << "node " << d.os_index;
    if (!d.subtype.empty()) os << " (" << d.subtype << ")";
    if (d.memory_bytes) os << ", " << bytes(d.memory_bytes);
    if (d.has_cpus())
      os << ": CPUs " << cgroup::format_cpu_list(d.cpus) << " (" << d.cores.size()
         << (d.cores.size() == 1 ? " core" : " cores") << ")";
    else
      os << ": no replica, " << d.no_cpu_reason;
    lines.push_back(os.str());
  }
  return lines;
}

Topology discover(const std::vector<int>& usable) {
  Hwloc t(nullptr);
  Topology topo = build(t.get(), usable);
  topo.source = "this machine";
  for (const char* var : {"HWLOC_SYNTHETIC", "HWLOC_XMLFILE", "HWLOC_FSROOT"})
    if (const auto v = env::get(var)) topo.source = std::string(var) + "=" + *v;
  return topo;
}

Topology discover_synthetic(const std::string& description, const std::vector<int>& usable) {
  Hwloc t(&description);
  Topology topo = build(t.get(), usable);
  topo.source = "synthetic " + description;
  return topo;
}

}  // namespace corun::numa
