// sched/profiler/profile_file.hpp — what `corun profile` measured, saved for later runs (CORUN_PROFILE).
//
// A JSON file (docs/scheduling.md), one executor layout per element of "tried":
//
//   {"format": "corun-profile", "version": 1, "machine_key": "corun-0123456789ab", "cpu": "AMD EPYC 7B13",
//    "workers": 2, "model": "lstm", "size": "small", "layout": "2x1",
//    "tried": [{"layout": "2x1", "median_ms": 40.1, "min_ms": 39.0, "runs": 5},
//              {"layout": "1x2", "median_ms": 44.9, "min_ms": 43.2, "runs": 5}]}
//
// A profile in the text format of earlier versions ("# corun profile v1", key=value lines) is still read,
// with a warning on stderr; profiles are always written as JSON, atomically (a killed profiler leaves no
// half file).
#pragma once

#include "sched/layout.hpp"

#include <string>
#include <vector>

namespace corun::sched {

struct ProfiledConfig {
  ExecutorLayout layout;
  double median_ms = 0.0;
  double min_ms = 0.0;
  int runs = 0;
};

struct Profile {
  std::string machine_key;  ///< which machines the models and the layout are valid for
  std::string cpu;
  int workers = 0;
  std::string model, size;  ///< what was profiled
  ExecutorLayout layout;    ///< the chosen executor layout
  std::vector<ProfiledConfig> tried;
};

/// Throws corun::Error (io_error) naming the path when it cannot be written.
void write_profile(const std::string& path, const Profile& profile);
/// Throws corun::Error: io_error when unreadable, invalid_config (with the line, or the JSON member) when
/// malformed.
Profile read_profile(const std::string& path);

}  // namespace corun::sched
