#include "cli/simulate/calibration_command.hpp"

namespace corun::cli::sim {

namespace {

constexpr const char* kCalibrationIters = "12";

// The command with its iteration count replaced by kCalibrationIters (or given one), quoted.
std::string calibration_args(const std::vector<std::string>& command) {
  std::string s;
  for (size_t i = 0; i < command.size(); ++i) {
    if (command[i] == "--iters") {
      ++i;  // and its value
      continue;
    }
    if (command[i].rfind("--iters=", 0) == 0) continue;
    s += " " + shell_word(command[i]);
  }
  return s + " --iters " + kCalibrationIters;
}

}  // namespace

std::string shell_word(const std::string& s) {
  bool safe = !s.empty();
  for (char c : s)
    safe = safe && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string("-_./=:,+@%").find(c) != std::string::npos);
  if (safe) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string calibration_advice(const CalibrationTarget& t) {
  if (!t.target_models.empty())
    return "the target's models in " + t.target_models +
           " lack them: on the target machine, run `corun profile` for this command's model and sizes (it "
           "calibrates every op at every team width) and copy its <perf model dir>/codelets/45/corun_*.<key> files "
           "into " + t.target_models + " (docs/simulation.md)\n";
  std::string env = "STARPU_PERF_MODEL_DIR=" + shell_word(t.measured_dir);
  if (!t.measured_key.empty()) env += " STARPU_HOSTNAME=" + shell_word(t.measured_key);
  const std::string run = " " + shell_word(t.native_corun) + calibration_args(t.command);
  return "calibrate them natively with the same options, every op at width 1, then at width 2 (on a quiet "
         "machine), and simulate again:\n  " +
         env + " STARPU_CALIBRATE=1 CORUN_SCHED=lws" + run + "\n  " + env +
         " STARPU_CALIBRATE=1 CORUN_SCHED=cpf CORUN_EXECUTORS=1x2" + run + "\n";
}

}  // namespace corun::cli::sim
