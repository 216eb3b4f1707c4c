// cli/args.hpp — strict command-line parsing for the corun CLI: unknown flags, missing values and
// malformed numbers are usage errors (exit code 2), never ignored.
#pragma once

#include <corun/engine.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace corun::cli {

/// A usage error: printed with the command's usage text, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FlagSpec {
  std::string name;       ///< "--iters"
  bool takes_value;       ///< false for switches
  std::string help;       ///< one line for the usage text
};

class Args {
 public:
  /// Parses argv[first..] against `specs`; throws UsageError on anything unexpected. With `positionals`,
  /// arguments that do not start with '-' are collected there instead of being errors (the caller checks
  /// how many it got).
  Args(int argc, char** argv, int first, const std::vector<FlagSpec>& specs,
       std::vector<std::string>* positionals = nullptr);

  bool has(const std::string& flag) const { return values_.count(flag) != 0; }
  std::string str(const std::string& flag, const std::string& fallback) const;
  /// A positive integer (or the fallback when absent); anything else is a UsageError.
  long positive(const std::string& flag, long fallback) const;
  double positive_real(const std::string& flag, double fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

/// CORUN_SCHED=help (`config.policy`): prints every policy with its description and returns true (the command
/// then exits 0, after its arguments were parsed, so usage errors still win).
bool policy_help_requested(const Config& config);

/// "  --iters N   iterations to run" lines for the usage text.
std::string describe(const std::vector<FlagSpec>& specs);

}  // namespace corun::cli
