// cli/simulate/history_file.hpp — StarPU 1.3's history perfmodel files (format version 45), read and written
// without StarPU: `corun simulate` turns the models measured on this machine into models of another one.
//
// A file is `<perf model dir>/codelets/45/<symbol>.<machine key>`. It holds one "comb" per perf arch (for
// corun: CPU teams of ncores = 1, 2, ...; one implementation) and, per comb, one entry per footprint (the
// op's shapes and attributes): mean time in µs and the number of samples. Writer and reader follow
// src/core/perfmodel/perfmodel_history.c (dump_model_file, parse_model_file) of 1.3.10.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace corun::cli::sim {

struct HistoryEntry {
  uint32_t footprint = 0;
  unsigned long size = 0;  ///< bytes of the task's buffers (StarPU's data size)
  double flops = 0;
  double mean_us = 0;
  double deviation_us = 0;
  unsigned nsample = 0;
};

/// Entries per team width (the comb's number of cores), implementation 0 only.
struct HistoryModel {
  std::map<int, std::vector<HistoryEntry>> by_width;
};

/// Reads a history model file; throws corun::Error(io_error) naming the file and what was unexpected.
HistoryModel read_history_file(const std::string& path);

/// The file's text, as StarPU writes it (it reloads it with its own parser).
std::string history_file_text(const HistoryModel& model);

}  // namespace corun::cli::sim
