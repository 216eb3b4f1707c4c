#include "numa/pages.hpp"

#include <corun/error.hpp>

#include <numa.h>
#include <numaif.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace corun::numa {

namespace {

uintptr_t page_size() { return static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

bool machine_has_node(int os_node) {
  if (numa_available() < 0 || os_node < 0 || os_node > numa_max_node()) return false;
  long long free_bytes = 0;
  return numa_node_size64(os_node, &free_bytes) > 0;
}

size_t move_to_node(void* p, size_t bytes, int os_node) {
  if (!machine_has_node(os_node))
    throw Error(Status::invalid_argument, "corun: numa: this machine has no memory on NUMA node " +
                                              std::to_string(os_node) + " to move pages to");
  const uintptr_t ps = page_size();
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + ps - 1) / ps * ps;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / ps * ps;
  if (end <= begin) return 0;
  const size_t count = static_cast<size_t>((end - begin) / ps);
  std::vector<void*> pages(count);
  std::vector<int> nodes(count, os_node), status(count, 0);
  for (size_t i = 0; i < count; ++i) pages[i] = reinterpret_cast<void*>(begin + i * ps);
  if (numa_move_pages(0, static_cast<unsigned long>(count), pages.data(), nodes.data(), status.data(),
                      MPOL_MF_MOVE) != 0)
    throw Error(Status::runtime_error, std::string("corun: numa: moving ") + std::to_string(count) +
                                           " pages to NUMA node " + std::to_string(os_node) + " failed: " +
                                           std::strerror(errno));
  return count;
}

size_t interleave(void* p, size_t bytes, const std::vector<int>& os_nodes) {
  if (os_nodes.empty()) throw Error(Status::invalid_argument, "corun: numa: no NUMA node to interleave pages over");
  unsigned long max_node = 0;
  for (int node : os_nodes) {
    if (!machine_has_node(node))
      throw Error(Status::invalid_argument, "corun: numa: this machine has no memory on NUMA node " +
                                                std::to_string(node) + " to interleave pages over");
    max_node = std::max(max_node, static_cast<unsigned long>(node));
  }
  const uintptr_t ps = page_size();
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + ps - 1) / ps * ps;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / ps * ps;
  if (end <= begin) return 0;
  const size_t bits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(max_node / bits + 1, 0);
  for (int node : os_nodes) mask[static_cast<size_t>(node) / bits] |= 1UL << (static_cast<size_t>(node) % bits);
  // maxnode counts bits and the kernel ignores the last one: one more than the highest node.
  if (mbind(reinterpret_cast<void*>(begin), end - begin, MPOL_INTERLEAVE, mask.data(), max_node + 2, MPOL_MF_MOVE) != 0)
    throw Error(Status::runtime_error, std::string("corun: numa: interleaving ") + std::to_string((end - begin) / ps) +
                                           " pages failed: " + std::strerror(errno));
  return static_cast<size_t>((end - begin) / ps);
}

int node_of_page(const void* p) {
  void* page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) / page_size() * page_size());
  int status = -1;
  if (numa_available() < 0 || numa_move_pages(0, 1, &page, nullptr, &status, 0) != 0) return -1;
  return status;
}

}  // namespace corun::numa
