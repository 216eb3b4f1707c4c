// cli/sessions/sessions.hpp — what the model sessions of `corun train` share (cli/train_session.cpp): the
// rows of a batch each replica trains on, one step over the replicas, the text of identities and titles; and
// each model file's factory, which make_session() calls once the common flags are checked.
#pragma once

#include "cli/args.hpp"
#include "cli/optimizer_flags.hpp"
#include "cli/train_session.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <memory>
#include <string>
#include <vector>

namespace corun::cli {

/// The rows of a batch each replica trains on: B / share.total, or an error when that does not divide B.
int replica_batch(const std::string& model, int batch, const BatchShare& share);
/// Writes replica r's rows of a batch-major array holding the whole batch (the r-th of n equal parts) into t.
void write_rows(Engine& engine, Graph& g, Tensor t, const std::vector<float>& whole, int r, int n);
/// One step over the replicas' graphs: the one solver's run, or the replicated step with its tree reduction
/// (also for one replica per rank of a job: the reduction then runs across the ranks).
RunStats run_step(Engine& engine, const std::vector<Graph*>& graphs, const BatchShare& share, float learning_rate,
                  float momentum);
/// ", 2 replicas" for a title (nothing for one solver).
std::string replicas_note(int replicas);
/// "1 iteration", "20 iterations".
std::string iterations_text(long n);
/// A float as text that reads back exactly (%.9g): identities compare as text.
std::string exact(double v);

/// cli/sessions/lstm.cpp: --model lstm | phased-lstm.
std::unique_ptr<TrainSession> make_lstm_session(const Args& args, const BatchShare& share);
/// cli/sessions/wide_deep.cpp: --model wide-deep (one solver).
std::unique_ptr<TrainSession> make_wide_deep_session(const Args& args);
/// cli/sessions/cnn.cpp: --model cifar-quick | pathnet | googlenet; `size` is the checked --size.
std::unique_ptr<TrainSession> make_cnn_session(const Args& args, const std::string& model, const std::string& size,
                                               const BatchShare& share);

/// cli/sessions/onnx.cpp: --onnx FILE (one solver).
std::unique_ptr<TrainSession> make_onnx_session(const Args& args, const BatchShare& share);

}  // namespace corun::cli
