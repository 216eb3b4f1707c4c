// corun/trace.hpp — the execution timeline of one run (Engine::set_tracing, `corun train --trace`).
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace corun {

/// One task of a traced run.
struct TraceTask {
  std::string op, node;        ///< op kind ("matmul") and graph node name
  int executor = -1;           ///< executor index (corun's policies), -1 for StarPU built-ins
  std::vector<int> cores;      ///< StarPU worker ids of the team that ran it
  int width = 1;               ///< team width
  double start_us = 0, end_us = 0;   ///< kernel start/end, µs from the start of the run
  double predicted_us = NAN;   ///< model prediction at the width used (NaN: uncalibrated)
  double level_us = NAN;       ///< critical-path level given to the policy (NaN: none)
  bool critical = false;       ///< on the predicted critical path
  int iteration = 0;           ///< run number within the engine (0-based)
};

/// Facts about the traced run, shown above the timeline.
struct TraceMeta {
  std::string policy, layout, machine;
  int workers = 0;
  double makespan_us = 0;
  double critical_path_us = NAN, total_work_us = NAN, lower_bound_us = NAN;
};

}  // namespace corun
