// Fixture of the simgrid tests: writes what StarPU's SimGrid mode loads before a test's main starts, with
// the same code as `corun simulate` (cli/simulate/): the platform of CORES CPUs and one history model.
//   write_test_machine DIR KEY CORES SYMBOL FOOTPRINT_HEX WIDTH:US [WIDTH:US ...]
#include "cli/simulate/history_file.hpp"
#include "cli/simulate/platform_files.hpp"

#include "base/files.hpp"
#include <corun/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s DIR KEY CORES SYMBOL FOOTPRINT_HEX WIDTH:US [WIDTH:US ...]\n", argv[0]);
    return 2;
  }
  try {
    const std::string dir = argv[1], key = argv[2], symbol = argv[4];
    corun::cli::sim::write_platform_files(dir, key, std::atoi(argv[3]));
    corun::cli::sim::HistoryModel model;
    for (int i = 6; i < argc; ++i) {
      corun::cli::sim::HistoryEntry e;
      e.footprint = static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 16));
      e.nsample = 12;  // above StarPU's calibration minimum of 10
      const int width = std::atoi(argv[i]);
      e.mean_us = std::atof(std::strchr(argv[i], ':') + 1);
      model.by_width[width].push_back(e);
    }
    const std::filesystem::path codelets = std::filesystem::path(dir) / "codelets" / "45";
    std::filesystem::create_directories(codelets);
    corun::write_file_atomically((codelets / (symbol + "." + key)).string(),
                                 corun::cli::sim::history_file_text(model));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
