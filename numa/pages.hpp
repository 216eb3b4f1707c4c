// numa/pages.hpp — putting a replica's memory on its NUMA domain (Linux move_pages through libnuma).
//
// corun's tensors are allocated and zero-filled when a graph is built, on whichever thread builds it, so their
// pages start on that thread's node. A replica's buffers are moved to the replica's domain once, when the engine
// registers them there; the kernels then find them local.
#pragma once

#include <cstddef>
#include <vector>

namespace corun::numa {

/// Whether this machine has memory on OS NUMA node `os_node` (libnuma; false when NUMA is unavailable).
bool machine_has_node(int os_node);

/// Moves the pages lying entirely inside [p, p + bytes) to OS NUMA node `os_node` and returns how many pages
/// that covers (a buffer smaller than a page, or its partial first and last pages, stay where they are: they
/// share pages with other buffers). Throws corun::Error when the machine has no such node or the kernel
/// refuses the move.
size_t move_to_node(void* p, size_t bytes, int os_node);

/// Interleaves the pages lying entirely inside [p, p + bytes) over the OS NUMA nodes `os_nodes` (page i on
/// node i mod n: mbind MPOL_INTERLEAVE, moving pages already faulted in) and returns how many pages that
/// covers. Throws corun::Error when the machine lacks one of the nodes or the kernel refuses.
size_t interleave(void* p, size_t bytes, const std::vector<int>& os_nodes);

/// The OS NUMA node the page holding `p` is on now (negative: not faulted in yet, or NUMA is unavailable).
/// For tests and diagnostics.
int node_of_page(const void* p);

}  // namespace corun::numa
