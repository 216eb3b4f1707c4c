// graphs/passes/levels.hpp — task dependencies and critical-path levels of a graph (plain C++).
//
// The engine submits nodes in creation order and StarPU derives dependencies from the access modes
// (sequential consistency: read-after-write, write-after-read, write-after-write on each value).
// dependencies() derives the same edges here, so the level of a node — its predicted time plus the
// largest level among its successors, i.e. the longest predicted time from it to the sink (Graphi 4.3) —
// is computed on exactly the DAG StarPU runs.
#pragma once

#include "graphs/graph_impl.hpp"

#include <cstdint>
#include <vector>

namespace corun::graphs {

/// successors[n]: nodes that must wait for node n (sorted, no duplicates). Derived from buffers and modes.
struct Dependencies {
  std::vector<std::vector<int32_t>> successors;
  std::vector<std::vector<int32_t>> predecessors;
};
Dependencies dependencies(const detail::GraphImpl& graph);

struct Levels {
  std::vector<double> level;    ///< per node: time[n] + max level of its successors
  std::vector<char> critical;   ///< per node: on the critical path (ties: the first successor in node order)
  double critical_path = 0.0;   ///< the largest level (the length of the critical path)
  double total = 0.0;           ///< sum of the times
};

/// Levels for per-node times `time` (same length as the node list; negative or NaN count as 0).
Levels levels(const Dependencies& deps, const std::vector<double>& time);

}  // namespace corun::graphs
