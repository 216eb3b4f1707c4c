// cli/exec_choice.hpp — `corun infer --exec starpu|inline|auto` (wide-deep and --onnx): the flag's check and
// auto's choice. Both paths compute the same bits, so auto may choose by time alone.
#pragma once

#include "cli/args.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace corun::cli {

/// --exec's value (default starpu); a usage error unless starpu, inline or auto.
inline std::string exec_mode(const Args& args) {
  std::string exec = args.str("--exec", "starpu");
  if (exec != "starpu" && exec != "inline" && exec != "auto")
    throw UsageError("--exec must be starpu, inline or auto, got '" + exec + "'");
  return exec;
}

/// How many timed runs of each path --exec auto compares: max(5, --warmup), each after one untimed run.
inline long exec_trial_runs(long warmup) { return std::max(5L, warmup); }

/// --exec auto's decision: the median of each path's timed runs and the faster path.
struct ExecChoice {
  double inline_median = 0.0, starpu_median = 0.0;
  std::string chosen;  ///< "inline" or "starpu"
};

inline ExecChoice choose_exec(std::vector<double> inline_times, std::vector<double> starpu_times) {
  std::sort(inline_times.begin(), inline_times.end());
  std::sort(starpu_times.begin(), starpu_times.end());
  ExecChoice c;
  c.inline_median = inline_times[inline_times.size() / 2];
  c.starpu_median = starpu_times[starpu_times.size() / 2];
  c.chosen = c.inline_median < c.starpu_median ? "inline" : "starpu";
  return c;
}

}  // namespace corun::cli
