// core/engine/trace.hpp — the execution timeline file: what ran where and when, in the Chrome Trace Event
// JSON format (opens in https://ui.perfetto.dev and chrome://tracing), plus corun's own run summary.
// Plain C++, no StarPU: the engine fills these structs, `corun plot-trace` reads them back.
//
// Usage:
//   TraceMeta meta{.policy = "cpf", .layout = "2x1", .machine = "AMD EPYC 7B13, 2 cores", .workers = 2,
//                  .makespan_us = 51160};
//   std::vector<TraceTask> tasks = ...;     // one per executed task
//   write_chrome_trace("run.trace.json", meta, tasks);
//   TraceFile back = read_chrome_trace("run.trace.json");   // the same meta and tasks, in the same order
//
// The format is described in docs/traces.md.
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

/// What read_chrome_trace returns.
struct TraceFile {
  TraceMeta meta;
  std::vector<TraceTask> tasks;  ///< in the order they were written
};

/// Writes `tasks` as a Chrome trace to `path`: first to `path + ".tmp"`, then renamed, so `path` is
/// either the old file or the complete new one. Throws corun::Error: invalid_argument naming the task
/// when a task is malformed (no cores, width != cores.size(), a core outside [0, workers), a duplicate
/// core, non-finite or reversed times); io_error naming the path when the file cannot be written.
void write_chrome_trace(const std::string& path, const TraceMeta& meta, const std::vector<TraceTask>& tasks);

/// Reads a file written by write_chrome_trace. Throws corun::Error(io_error) naming the file and what is
/// wrong: unreadable, not JSON (with line and column), a Chrome trace corun did not write, or a corun
/// trace with a missing or malformed field (naming the event).
TraceFile read_chrome_trace(const std::string& path);

}  // namespace corun
