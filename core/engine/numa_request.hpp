// core/engine/numa_request.hpp — what the engine does with CORUN_NUMA / CORUN_REPLICAS today.
#pragma once

#include <string>
#include <vector>

namespace corun::engine {

/// Reads CORUN_NUMA and CORUN_REPLICAS strictly and plans replicas over the NUMA domains of `usable` CPUs
/// (empty: the whole topology, for fake topologies). The engine runs one solver on all allocated cores
/// (mode off): per-domain replicas and interleaved pages are not built yet (issue 7). So an explicit request
/// for them is a corun::Error rather than silently ignored, while the default (replicate on an allocation
/// that spans several domains) runs as off and returns a note saying so; "" otherwise.
std::string check_numa_request(const std::vector<int>& usable);

}  // namespace corun::engine
