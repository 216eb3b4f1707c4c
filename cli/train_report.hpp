// cli/train_report.hpp — what `corun train` prints and writes once its iterations are done: the results
// table, the lower bound, the trace, the saved files and --json. cli/train.cpp parses, sets up and loops;
// the types below carry what it hands over.
#pragma once

#include "cli/checkpoint.hpp"
#include "cli/train_session.hpp"
#include "engine/mpi/job.hpp"

#include <corun/engine.hpp>

#include <string>
#include <vector>

namespace corun::cli {

/// What the command line asks for (the model's own flags stay with its TrainSession).
struct TrainOptions {
  long iters = 0, ckpt_every = 0, progress_every = 0;
  bool fuse = false, resume = false, allow_non_finite = false;
  std::string json_path, save_dir, load_dir, grads_dir, trace_path, ckpt_dir, dump_dir;
  std::string save_onnx;  ///< --save-onnx: the trained model as ONNX (with --onnx only)
  std::string plan;  ///< what the run will do, said before it starts
  bool help = false;
};

/// What the plan step's passes did: the root replica's report and the node counts over every replica.
struct PassTotals {
  ParallelOps pass;  ///< the grouping pass's settings
  GraphPassReport root;
  int nodes_before = 0, nodes_after = 0;
};

/// What the iterations of this process measured, and how the run ended.
struct TrainRecord {
  CheckpointState state;       ///< the history before this process (from the checkpoint) and after
  long resumed_from = 0;       ///< the iteration this process started at
  std::vector<double> ms;      ///< this process's iterations
  std::vector<double> remote;  ///< bytes read from tensors homed on another NUMA domain, per iteration
  int tasks = 0;
  int tuning_runs = 0;  ///< runs of this process that measured widths for the policy's search (RunStats::tuning)
  RunStats last;
  int stop_signal = 0;  ///< agreed by every rank after each step, so that all stop after the same iteration
  bool stopped = false;  ///< stopped by a signal before the last iteration
};

/// Rank 0's report after the last iteration: the table and its notes on stdout, the trace, --save,
/// --dump-grads and --dump-inputs files, and --json. `accuracy` < 0: none.
void report_training(const TrainOptions& o, const TrainRecord& r, const PassTotals& passes, TrainSession& session,
                     Engine& engine, const job::World& world, bool checkpointing, double accuracy);

}  // namespace corun::cli
