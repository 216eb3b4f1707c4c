// apps/train_session.hpp — what `corun train` needs from a model, whatever the model: its graph, one
// training step on batch k, the identity a checkpoint must match, and (for a model with a test set) the
// test accuracy. make_session() builds the one `--model` names from the command-line flags.
#pragma once

#include "apps/args.hpp"
#include "apps/checkpoint.hpp"
#include "apps/json.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace corun::cli {

class TrainSession {
 public:
  virtual ~TrainSession() = default;
  virtual Graph& graph() = 0;
  virtual Tensor loss() const = 0;
  /// Writes batch `k` (the data position: batch k depends only on the seed and k) and runs one step.
  virtual RunStats step(Engine& engine, uint64_t k) = 0;
  /// Model name, shape and hyper-parameters, compared as text with a checkpoint's.
  virtual RunIdentity identity() const = 0;
  /// One line for the results header ("LSTM train: layers=4 batch=64 ...").
  virtual std::string title() const = 0;
  /// The "config" object of --json (without iters and the flags train itself adds).
  virtual void json_config(Json& j) const = 0;
  virtual std::string data_generator() const = 0;
  virtual uint64_t seed() const = 0;
  virtual float learning_rate() const = 0;
  /// Default iteration count when --iters is not given (epochs of a dataset, or 20).
  virtual long default_iters() const { return 20; }
  /// Test-set accuracy in [0, 1] of the current parameters, or a negative value for a model without a
  /// test set. May build and run (and release) a separate inference graph on `engine`.
  virtual double test_accuracy(Engine& engine) {
    (void)engine;
    return -1.0;
  }
};

/// Every model's flags (--model, --size, the shape overrides, the optimizer and data flags).
std::vector<FlagSpec> model_flags();
/// The session for --model, configured from the flags; throws UsageError for unknown or inapplicable flags.
std::unique_ptr<TrainSession> make_session(const Args& args);

}  // namespace corun::cli
