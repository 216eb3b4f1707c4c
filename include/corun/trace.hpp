// corun/trace.hpp — the execution timeline of one run (Engine::set_tracing, `corun train --trace`).
// Written as a Chrome/Perfetto trace by trace/trace.hpp; format in docs/traces.md.
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace corun {

/// One executed task.
struct TraceTask {
  std::string op;             ///< op kind ("matmul"); the event name, and the colour key of the Gantt chart
  std::string node;           ///< graph node name ("l0.t3.gates")
  int executor = -1;          ///< executor (team) index in the layout, -1 when the policy has none
  std::vector<int> cores;     ///< worker ids that ran it (the team), first = the one that started it
  int width = 1;              ///< team width; always cores.size()
  double start_us = 0;        ///< start, in µs from the trace origin (e.g. the start of the run)
  double end_us = 0;          ///< end, in µs, >= start_us
  double predicted_us = NAN;  ///< the policy's duration estimate at this width, NaN when none
  double level_us = NAN;      ///< critical-path level: longest estimated time from this task to the sink
  bool critical = false;      ///< on the critical path
  int iteration = 0;          ///< Engine::run number the task belongs to
  std::string reason;         ///< corun policy: the candidates considered and why the chosen one won
};

/// The run the trace describes. NaN marks a value that was not computed.
struct TraceMeta {
  std::string policy;             ///< scheduling policy name
  std::string layout;             ///< executor layout, "2x1" (executors x cores each), "" when none
  std::string machine;            ///< CPU model, topology and the like, free text
  int workers = 0;                ///< CPU workers; every core id of every task is below this
  double makespan_us = 0;         ///< wall time of the traced run(s)
  double critical_path_us = NAN;  ///< longest estimated path through the graph
  double total_work_us = NAN;     ///< sum of the estimated single-core task times
  double lower_bound_us = NAN;    ///< max(critical path, total work / workers): no schedule is faster
};

}  // namespace corun
