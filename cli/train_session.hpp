// cli/train_session.hpp — what `corun train` needs from a model, whatever the model: its graph, one
// training step on batch k, the identity a checkpoint must match, and (for a model with a test set) the
// test accuracy. make_session() builds the one `--model` names from the command-line flags.
#pragma once

#include "cli/args.hpp"
#include "cli/checkpoint.hpp"

#include "base/json.hpp"

#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace corun::cli {

/// Which parts of every batch this process trains on. The global batch is cut into `total` equal parts, one
/// per replica of the whole job, and this process's `local` replicas train on parts [first, first + local).
/// One process: first 0, total = local. MPI rank r of N with R replicas each: first = r R, total = N R
/// (docs/batch-jobs.md#several-nodes), so N ranks see exactly the rows one process sees.
struct BatchShare {
  int local = 1;
  int first = 0;
  int total = 1;
  static BatchShare of(int replicas, int rank, int ranks) { return {replicas, rank * replicas, replicas * ranks}; }
};

// With N solver replicas (docs/numa.md) a session holds N graphs of the model over batch / N samples each:
// replica r trains on rows [r B/N, (r+1) B/N) of every batch, so together they see exactly the one solver's
// batch, and Engine::run_replicated sums their gradients and updates once. Replica 0 (the root) holds the
// parameters and optimizer state that checkpoints, --save and the test accuracy use.
class TrainSession {
 public:
  virtual ~TrainSession() = default;
  /// Replica r's graph, r < replicas() (one graph for one solver).
  virtual Graph& graph(int r = 0) = 0;
  virtual Tensor loss(int r = 0) const = 0;
  virtual int replicas() const { return 1; }
  /// Writes batch `k` (the data position: batch k depends only on the seed and k) and runs one step.
  virtual RunStats step(Engine& engine, uint64_t k) = 0;
  /// Model name, shape and hyper-parameters, compared as text with a checkpoint's.
  virtual RunIdentity identity() const = 0;
  /// One line for the results header ("LSTM train: layers=4 batch=64 ...").
  virtual std::string title() const = 0;
  /// The "config" object of --json (without iters and the flags train itself adds).
  virtual json::Value json_config() const = 0;
  /// Whether the plan step keeps this model's activations in oneDNN's blocked layout (Config::block_layouts;
  /// --keep-layouts: false), or nothing for a model without convolutions (no "blocked_tensors" in --json).
  virtual std::optional<bool> layout_blocking() const { return std::nullopt; }
  virtual std::string data_generator() const = 0;
  virtual uint64_t seed() const = 0;
  virtual float learning_rate() const = 0;
  /// Default iteration count when --iters is not given (epochs of a dataset, or 20).
  virtual long default_iters() const { return 20; }
  /// What a run of `iters` iterations will do, said before it starts: "20 iterations of batch 64", plus
  /// epochs, the evaluation and a warning when the defaults are heavy for a small machine.
  /// `iters_given`: --iters was on the command line (otherwise default_iters() chose the count).
  virtual std::string run_plan(long iters, bool iters_given) const = 0;
  /// Test-set accuracy in [0, 1] of the current parameters, or a negative value for a model without a
  /// test set. May build and run (and release) a separate inference graph on `engine`.
  virtual double test_accuracy(Engine& engine) {
    (void)engine;
    return -1.0;
  }
  /// --save-onnx PATH (corun train --onnx only): writes the model file the session was imported from, with
  /// the trained values read through `engine` (corun::save_onnx_model). A session of a built-in model has no
  /// such file: parse_options refuses --save-onnx without --onnx before any session is made.
  virtual void save_onnx(Engine& engine, const std::string& path) {
    (void)engine;
    throw Error(Status::invalid_config, "corun: --save-onnx '" + path + "' needs a model trained with --onnx");
  }
  /// The run's total iteration count (the cosine schedule's length), set by corun train before the steps.
  void set_run_iters(long iters) { run_iters_ = iters; }

 protected:
  long run_iters_ = 20;
};

/// What every rank knows after a step (one process: its own values).
struct JobStep {
  float loss = 0.0f;    ///< the whole batch's loss: the mean of every replica's loss of the job
  int stop_signal = 0;  ///< the largest stop signal any rank received (0: none), so all stop together
};
/// Reads this process's replicas' losses (each a mean over its rows), gathers every rank's in rank order (a
/// collective over the job's ranks) and averages them in global replica order: the same sum as one process
/// with all the replicas. `my_stop_signal` is this rank's stop::requested().
JobStep finish_step(TrainSession& session, Engine& engine, int my_stop_signal);
/// Copies the root's parameters into the other replicas' host buffers (after --load or a resume, before the
/// engine binds the graphs), so every replica starts from the same weights.
void copy_root_params(TrainSession& session);
/// The graphs of every replica, in replica order.
std::vector<Graph*> replica_graphs(TrainSession& session);

/// Whether `corun train --model <model>` can run replicas (then CORUN_NUMA's default on several NUMA domains
/// is a replica per domain).
bool supports_replicas(const std::string& model);

/// Every model's flags (--model, --size, the shape overrides, the optimizer and data flags).
std::vector<FlagSpec> model_flags();
/// The session for --model, configured from the flags, with `replicas` solver replicas (Engine::info()
/// .replicas; planned_replicas() before the engine starts); throws UsageError for unknown or inapplicable
/// flags and corun::Error for a batch the replicas cannot share or a model without replica support.
std::unique_ptr<TrainSession> make_session(const Args& args, int replicas = 1);
/// The same, for this process's share of a job's batch (`share.local` replicas).
std::unique_ptr<TrainSession> make_session(const Args& args, const BatchShare& share);

}  // namespace corun::cli
