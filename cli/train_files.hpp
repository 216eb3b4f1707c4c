// cli/train_files.hpp — the files `corun train` reads and writes around the run: --load before the first
// step; --save, --dump-grads and --dump-inputs after the last one (rank 0 only). Kept out of cli/train.cpp,
// which runs the steps.
#pragma once

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <string>

namespace corun::cli {

/// --load DIR: every parameter of `g` from DIR/<name>.npy, and the optimizer state (batch_norm running
/// statistics, velocities) whose DIR/<name>.npy exists; a directory written without the state (an older
/// --save, another optimizer) leaves the state as the graph starts it. Throws corun::Error naming the tensor
/// and the file on a shape mismatch, and (unless `allow_non_finite`) on a NaN or an infinity.
void load_training_files(Graph& g, const std::string& dir, bool allow_non_finite);

/// Where the outputs of a finished run go; an empty directory is not written.
struct TrainOutputDirs {
  std::string save;         // --save: parameters and state as <name>.npy
  std::string grads;        // --dump-grads: the last iteration's gradients as <name>.grad.npy
  std::string inputs;       // --dump-inputs: the last step's inputs and targets as <name>.npy
  int job_replicas = 1;     // replicas of every rank: the root's gradients are their sum, divided back to a mean
};

/// Writes the outputs named in `dirs` from `g` (the root replica), read through the engine; each directory is
/// created. Throws corun::Error(io_error) naming the directory when it cannot be created.
void write_training_files(Engine& engine, Graph& g, const TrainOutputDirs& dirs);

/// --dump-inputs alone: every input of `g` (data and targets, as the last step wrote them) as DIR/<name>.npy.
void dump_inputs(Engine& engine, Graph& g, const std::string& dir);

}  // namespace corun::cli
