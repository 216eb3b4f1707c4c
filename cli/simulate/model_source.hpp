// cli/simulate/model_source.hpp — everything `corun simulate` writes before it starts the SimGrid build:
// the platform of the machine file and the per-width models of every op, from one of two sources:
//   (a) the target's own models (`corun profile` run there; the files copied here), used as they are;
//   (b) this machine's measured width-1/2 models, scaled to widths 1..cores by a law (scaling_law.hpp).
#pragma once

#include "cli/simulate/machine_file.hpp"

#include <string>

namespace corun::cli::sim {

struct SourceRequest {
  std::string machine_file;
  std::string law;            ///< source (b): "optimistic" | "pessimistic"
  std::string target_models;  ///< source (a) when not empty: directory of corun_<op>.<key> files
  std::string measured_dir;   ///< source (b): perf model dir holding codelets/45/corun_<op>.<measured_key>
  std::string measured_key;
  bool use_width2 = true;     ///< source (b): false ignores the measured width-2 times
  std::string out_dir;        ///< becomes STARPU_PERF_MODEL_DIR of the simulated run
};

struct Prepared {
  Machine machine;
  std::string key;     ///< STARPU_HOSTNAME of the simulated run: corun-sim-<machine>-<law|target>
  std::string source;  ///< one line naming the model source, printed with the run's results
};

/// Writes the platform and the models into req.out_dir. Throws corun::Error naming what is missing (no
/// measured models: run the command natively first) or unreadable.
Prepared prepare(const SourceRequest& req);

}  // namespace corun::cli::sim
