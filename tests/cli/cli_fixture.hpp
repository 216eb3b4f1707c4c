// tests/cli/cli_fixture.hpp — what the `corun` end-to-end tests (test_cli_*.cpp) share: the fixture that
// runs the executable in a temp dir, the tiny training arguments, and readers of the results table.
#pragma once

#include "common/corun_process_test.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace corun::testing {

using Result = CommandResult;

// One fixture type for every file of the executable (gtest requires it for the suite `Cli`). Its env keeps the
// caller's CORUN_QUIET: tests that check the configuration line and the progress output set it themselves.
class Cli : public CorunProcessTest {
 protected:
  Cli() : CorunProcessTest("cli", corun_test_env({}, "")) {}
};

inline const std::string kTiny = "--model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1";

// ------------------------------------------------------------------------------------- the results table

// The first markdown row whose first cell is `first_cell`, split into trimmed cells.
inline std::vector<std::string> table_row(const std::string& text, const std::string& first_cell) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) != 0) continue;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream ls(line.substr(1));
    while (std::getline(ls, cell, '|')) {
      const auto a = cell.find_first_not_of(' ');
      const auto b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    if (!cells.empty() && cells[0] == first_cell) return cells;
  }
  return {};
}

// The row following the header and separator lines.
inline std::vector<std::string> table_data_row(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("|", 0) == 0) lines.push_back(line);
  if (lines.size() < 3) return {};
  const std::string row = lines[2];
  std::vector<std::string> cells;
  std::istringstream ls(row.substr(1));
  for (std::string cell; std::getline(ls, cell, '|');) {
    const auto a = cell.find_first_not_of(' ');
    const auto b = cell.find_last_not_of(' ');
    cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return cells;
}

inline int column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace corun::testing
