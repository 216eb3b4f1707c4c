// cli/checkpoint.hpp — training checkpoints of `corun train --checkpoint DIR` (docs/batch-jobs.md).
//
//   Checkpoints ck(dir);                                   // creates and locks DIR, clears interrupted writes
//   if (auto s = ck.load_newest(graph, identity)) ...      // before the graph is bound to an Engine
//   ck.write(graph, engine, identity, state, lr);          // after an iteration
//
// A checkpoint is a directory DIR/ckpt-<iteration, 9 digits> holding one <param>.npy per parameter (and per
// optimizer state tensor, e.g. <param>.velocity.npy of SGD with momentum) and
// manifest.json (format, iteration, the run's identity, the data position, the optimizer, and the losses
// and times of every completed iteration, with an FNV-1a hash of each parameter's data). It is written
// into a temporary directory, every file fsync'ed, the directory fsync'ed, renamed into place and the
// parent fsync'ed: a crash at any moment leaves either the new checkpoint complete or none of it. Older
// checkpoints beyond the newest two are renamed aside and then removed, so no half-deleted checkpoint
// ever carries a ckpt- name.
#pragma once

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace corun::cli {

/// What must be equal for a resumed run to compute the same numbers (model shape, seed, learning rate,
/// cell, fusion): key and canonical text, compared exactly.
using RunIdentity = std::vector<std::pair<std::string, std::string>>;

struct CheckpointState {
  long iteration = 0;           ///< completed iterations, which is also the next batch index (data position)
  std::vector<double> losses;   ///< loss of each completed iteration
  std::vector<double> ms;       ///< wall time of each completed iteration
};

class Checkpoints {
 public:
  /// Creates `dir` if needed and takes an exclusive lock on `dir`/.lock (another corun using the same
  /// directory is an error); removes leftovers of interrupted writes. Throws corun::Error.
  explicit Checkpoints(const std::string& dir);
  ~Checkpoints();
  Checkpoints(const Checkpoints&) = delete;
  Checkpoints& operator=(const Checkpoints&) = delete;

  /// The newest checkpoint, loaded into the parameters of `g` (not yet bound to an Engine), with its state;
  /// nothing when `dir` holds no checkpoint. Anything wrong with it (another run's identity, a missing,
  /// damaged or mismatched file) throws corun::Error naming the file and what to do.
  std::optional<CheckpointState> load_newest(Graph& g, const RunIdentity& identity);
  /// Path of the checkpoint load_newest() loaded ("" before).
  const std::string& loaded_path() const { return loaded_; }

  /// Writes the checkpoint of `state.iteration` (parameters read through `engine`); returns its path.
  /// `data` names the data generator and its seed ("the RNG state": batch k depends only on them and k).
  std::string write(Graph& g, Engine& engine, const RunIdentity& identity, const CheckpointState& state,
                    double learning_rate, const std::string& data_generator, unsigned long long seed);

  /// Newest iteration written or loaded by this object (-1 when none).
  long newest() const { return newest_; }

  /// Checkpoints kept in `dir` (the newest ones); older ones are removed after each write.
  static constexpr int kKeep = 2;

 private:
  // The files of one checkpoint into `tmp`, then `tmp` renamed to `final_path` (both synced).
  void write_into(const std::string& tmp, const std::string& final_path, Graph& g, Engine& engine,
                  const RunIdentity& identity, const CheckpointState& state, double learning_rate,
                  const std::string& data_generator, unsigned long long seed);

  std::string dir_;
  std::string loaded_;
  int lock_fd_ = -1;
  long newest_ = -1;
};

}  // namespace corun::cli
