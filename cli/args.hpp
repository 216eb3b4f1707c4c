// cli/args.hpp — strict command-line parsing for the corun CLI: unknown flags, missing values and
// malformed numbers are usage errors (exit code 2), never ignored.
#pragma once

#include <corun/engine.hpp>

#include <map>
#include <stdexcept>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace corun::cli {

/// A usage error, exit code 2: usage_error() prints the usage line of the flag it is about (`flag`, or the
/// message's first word when that is a flag, as in "--iters needs a value"), a pointer to --help, and the
/// message last, where the eye is.
struct UsageError : std::runtime_error {
  explicit UsageError(const std::string& message, std::string about = "")
      : std::runtime_error(message), flag(std::move(about)) {}
  std::string flag;  ///< the flag the error is about ("" = the message's first word when it is a flag)
};

struct FlagSpec {
  std::string name;       ///< "--iters"
  bool takes_value;       ///< false for switches
  std::string help;       ///< one line for the usage text
};

/// The largest count a flag takes (--iters, --hidden, ...): beyond it sizes overflow long before memory.
inline constexpr long kMaxCount = 1000000000L;

class Args {
 public:
  /// Parses argv[first..] against `specs`; throws UsageError on anything unexpected. With `positionals`,
  /// arguments that do not start with '-' are collected there instead of being errors (the caller checks
  /// how many it got).
  Args(int argc, char** argv, int first, const std::vector<FlagSpec>& specs,
       std::vector<std::string>* positionals = nullptr);

  bool has(const std::string& flag) const { return values_.count(flag) != 0; }
  std::string str(const std::string& flag, const std::string& fallback) const;
  /// "--seq 999999999 --batch 4": each of `flags` given, with its value ("" when none), for messages.
  std::string given(std::initializer_list<const char*> flags) const;
  /// A positive integer up to kMaxCount (or the fallback when absent); anything else is a UsageError.
  long positive(const std::string& flag, long fallback) const;
  /// The same from 0 on (a count where 0 means "none": --eval-images 0 skips the evaluation).
  long non_negative(const std::string& flag, long fallback) const;
  double positive_real(const std::string& flag, double fallback) const;

 private:
  /// An integer from `lowest` to kMaxCount, or the fallback; else "<flag> needs <needs>, got '<value>'".
  long count_from(const std::string& flag, long fallback, long lowest, const std::string& needs) const;

  std::map<std::string, std::string> values_;
};

/// CORUN_SCHED=help (`config.policy`): prints every policy with its description and returns true (the command
/// then exits 0, after its arguments were parsed, so usage errors still win).
bool policy_help_requested(const Config& config);

/// "  --iters N   iterations to run" lines for the usage text.
std::string describe(const std::vector<FlagSpec>& specs);

/// Prints a usage error of `command` ("train") to stderr: the usage line of the flag it is about (when
/// `specs` has it; else the first line of `usage_text`, the synopsis), "see `corun <command> --help`", then
/// "corun <command>: <reason>" as the last line. Returns the usage exit code, 2. The whole usage text is
/// for --help only: printed under a reason, it pushes the reason off the screen.
int usage_error(const std::string& command, const UsageError& error, const std::vector<FlagSpec>& specs,
                const std::string& usage_text);

}  // namespace corun::cli
