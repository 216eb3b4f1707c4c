// cli/footprint.hpp — what a model's flags ask for, checked before the graph is built: every tensor of a
// corun graph is allocated when it is created, so `--seq 999999999` would otherwise grow the process until
// the kernel kills it. The estimates are lower bounds (tests/unit/test_footprint.cpp holds them below the
// built graphs' real sizes), so a run that fits is never refused.
#pragma once

#include <corun/models/cnn.hpp>
#include <corun/models/lstm.hpp>
#include <corun/models/text_similarity.hpp>
#include <corun/models/wide_deep.hpp>
#include <corun/serve.hpp>

#include <string>

namespace corun::cli {

struct Footprint {
  double bytes = 0;  ///< at least this many bytes of tensors and graph nodes
  double tasks = 0;  ///< at least this many tasks per iteration
};

/// Lower bounds for an LSTM / Phased LSTM training graph (fused cell: the smaller of the two), or with
/// `training` false its inference graph (no backward, no gradients).
Footprint lstm_footprint(const models::LstmConfig& c, bool training = true);
/// Lower bounds for a CNN training (or inference) graph (its input batch and one activation of the same size).
Footprint cnn_footprint(const models::CnnConfig& c, bool training = true);
/// Lower bounds for the wide&deep inference graph (inputs, embeddings, hidden layers, tables).
Footprint wide_deep_footprint(const models::WideDeepConfig& c);
/// Lower bounds for the text-similarity inference graph (both sentences' embeddings and GRU projections).
Footprint text_similarity_footprint(const models::TextSimilarityConfig& c);
/// Lower bounds for serving an RNN (`corun serve-bench`): the request [seq, batch, input], the weights and the
/// last layer's outputs [seq, batch, H * dirs], which the server and both baselines hold.
Footprint serve_rnn_footprint(const serve::ModelSpec& spec, int batch, int seq);

/// Throws corun::Error(invalid_config) when `f.bytes` exceeds `available_bytes`: "corun train: --seq 999999999
/// asks for at least 2.0 PiB (lstm layers=4 batch=64 seq=999999999 hidden=128, at least 3.2e10 tasks per
/// iteration), more than the 5.1 GiB available (MemAvailable in /proc/meminfo); lower ...". `flags` names
/// the flags the user gave ("--seq 999999999"; "" when only defaults apply), `shape` the model's sizes.
void check_fits(const Footprint& f, const std::string& flags, const std::string& shape, double available_bytes,
                const std::string& available_source, const std::string& lower_hint);
/// check_fits against memory_budget() (MemAvailable, the cgroup memory limit, ulimit -v).
void check_fits_in_memory(const Footprint& f, const std::string& flags, const std::string& shape,
                          const std::string& lower_hint);

}  // namespace corun::cli
