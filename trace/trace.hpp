// trace/trace.hpp — the execution timeline file: what ran where and when, in the Chrome Trace Event
// JSON format (opens in https://ui.perfetto.dev and chrome://tracing), plus corun's own run summary.
// Plain C++, no StarPU: the engine fills the structs of <corun/trace.hpp>, `corun plot-trace` reads them back.
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

#include <corun/trace.hpp>

#include <string>
#include <vector>

namespace corun {

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
