// cli/simulate/calibration_command.hpp — what `corun simulate` tells the user to run when the simulated run
// refused ops without a model (engine/simulated_models.hpp): the native calibration of the very command it
// was asked to simulate, writing where `corun simulate` reads its measurements (docs/simulation.md).
#pragma once

#include <string>
#include <vector>

namespace corun::cli::sim {

/// Where the measurements come from and which command was simulated.
struct CalibrationTarget {
  std::string native_corun;          ///< this (native) corun executable
  std::vector<std::string> command;  ///< train|infer and its options, as given after `--`
  std::string measured_dir;          ///< source (b): the perf model directory read (empty for source a)
  std::string measured_key;          ///< source (b): its machine key, when not this machine's own ("" otherwise)
  std::string target_models;         ///< source (a): the --models directory ("" for source b)
};

/// Source (b): the two native runs that calibrate every op of the command at width 1 (lws) and 2 (cpf 1x2),
/// `--iters` set to 12 (StarPU drops each entry's first sample and uses it from 10), one per line; source (a):
/// how to complete the target's models. Arguments are shell-quoted where needed.
std::string calibration_advice(const CalibrationTarget& t);

/// `s` as one shell word: unchanged when it is made of safe characters, else in single quotes.
std::string shell_word(const std::string& s);

}  // namespace corun::cli::sim
