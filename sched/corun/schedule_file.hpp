// sched/corun/schedule_file.hpp — the frozen schedule of deterministic corun mode, saved in CORUN_SCHEDULE
// (docs/scheduling.md) so that a later run of the same graph on the same cores places every task alike.
//
//   {"format": "corun-schedule", "version": 1, "graph": "9c1d2e3f4a5b6c7d", "nodes": 3, "cores": 4,
//    "blocks": [[0, 2], [2, 2], [0, 4]]}
//
// "graph" is the graph's hash (hex), "blocks" one [first core, width] per node in graph order. A file in
// the text format of earlier versions ("# corun schedule v1") is still read, with a warning on stderr;
// schedules are always written as JSON, atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace corun::sched {

struct FrozenSchedule {
  uint64_t graph_hash = 0;
  int cores = 0;
  std::vector<int> first;  ///< per node: the first core of its block
  std::vector<int> width;  ///< per node: the block's width
};

/// Throws corun::Error(invalid_config) when `path` exists but is not a schedule file (checked before
/// StarPU starts); a missing file is fine (the first tuned run writes it).
void check_schedule(const std::string& path);
/// The schedule in `path`, or nothing when there is no such file. Throws corun::Error(invalid_config) when
/// the file is malformed (a block outside [0, cores), a node without a block).
std::optional<FrozenSchedule> read_schedule(const std::string& path);
/// Throws corun::Error(io_error) naming the path when it cannot be written.
void write_schedule(const std::string& path, const FrozenSchedule& schedule);

}  // namespace corun::sched
