// cli/lstm_session.hpp — one LSTM training setup driven by an Engine, shared by `train` and `profile`.
#pragma once

#include "cli/args.hpp"

#include <corun/engine.hpp>
#include <corun/models/lstm.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace corun::cli {

class LstmSession {
 public:
  explicit LstmSession(const models::LstmConfig& cfg) : model(cfg), task_(cfg) { model.init_params(); }

  /// Writes batch `k` into the inputs, runs one training step and returns its statistics.
  RunStats step(Engine& engine, uint64_t k) {
    task_.make_batch(k, xs_, targets_);
    for (size_t t = 0; t < model.x.size(); ++t) engine.write(model.graph, model.x[t], xs_[t]);
    engine.write(model.graph, model.targets, targets_);
    if (!model.times.empty()) {  // Phased LSTM: the steps' timestamps
      task_.make_times(k, times_);
      for (size_t t = 0; t < model.times.size(); ++t) engine.write(model.graph, model.times[t], times_[t]);
    }
    return engine.run(model.graph);
  }

  models::Lstm model;

 private:
  models::SequenceTask task_;
  std::vector<std::vector<float>> xs_;  // reused: no allocation per step
  std::vector<float> targets_;
  std::vector<std::vector<float>> times_;
};

/// The flags that choose an LSTM (--model lstm, --size and the shape overrides), for a command's flag list.
std::vector<FlagSpec> lstm_flags();
/// Reads them strictly; throws UsageError. `size_out` gets the --size name.
models::LstmConfig lstm_config_from(const Args& args, std::string& size_out);

/// Median of a sample (0 when empty).
double median(std::vector<double> v);

}  // namespace corun::cli
