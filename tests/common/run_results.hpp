// tests/common/run_results.hpp — reading what `corun train` leaves behind: the losses of its --json file and
// the newest checkpoint of a --checkpoint directory.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace corun::testing {

/// The "loss" array of a `corun train --json` file, as its text (the writer prints each float exactly, so equal
/// text is equal bits); "" when there is none.
inline std::string losses_of(const std::string& json_text) {
  const auto at = json_text.find("\"loss\":[");
  if (at == std::string::npos) return "";
  return json_text.substr(at + 8, json_text.find(']', at) - at - 8);
}

/// The iteration of the newest checkpoint (ckpt-<9 digits>) in `dir`; -1 when it has none or cannot be read.
inline long newest_checkpoint(const std::string& dir) {
  long newest = -1;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ckpt-", 0) == 0 && name.size() == 14) newest = std::max(newest, std::atol(name.c_str() + 5));
  }
  return newest;
}

}  // namespace corun::testing
