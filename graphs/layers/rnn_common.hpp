// graphs/layers/rnn_common.hpp — what the ONNX LSTM and GRU layer builders (corun/rnn.hpp) share: checking a
// node's attributes and operand shapes, taking one direction's slice of a weight, zero states, and gluing
// the per-step hidden states into ONNX's Y / Y_h / Y_c.
#pragma once

#include <corun/rnn.hpp>

#include <string>
#include <vector>

namespace corun::rnn::detail {

/// The extents every operand was checked against.
struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int dirs = 1;
};

/// Checks the options (the unsupported ones throw) and the shapes of X, W, R, B and the initial states
/// (`gates` = 4 for LSTM, 3 for GRU); `op` is "LSTM" or "GRU", `layer` the layer's name for messages.
RnnDims check_layer(const char* op, const std::string& layer, int gates, const RnnOptions& o, Tensor x, Tensor w,
                    Tensor r, Tensor b, const std::vector<Tensor>& initial);

/// Direction d's part of `t` [dirs, ...] as a tensor without the leading dimension.
Tensor direction_part(Graph& g, Tensor t, int d, int dirs, const std::string& name);

/// Columns or rows `blocks` (each `h` wide, along `dim`) of `t`, concatenated in the given order (a gate
/// reordering; {0, 1, ..} with every block in place returns t itself).
Tensor reorder_blocks(Graph& g, Tensor t, int dim, int64_t h, const std::vector<int>& blocks, const std::string& name);

/// A zero-filled constant (an absent initial state).
Tensor zeros(Graph& g, const Shape& shape, const std::string& name);

/// The states of one direction, in time order (steps[t] is the state at step t whatever the direction).
/// Returns [seq, 1, batch, H].
Tensor stack_steps(Graph& g, const std::vector<Tensor>& steps, const RnnDims& d, const std::string& name);

/// Concatenates per-direction tensors [1, ...] along dimension `dim` (a single one is returned as is).
Tensor join_directions(Graph& g, const std::vector<Tensor>& parts, int dim, const std::string& name);

/// [batch, H] -> [1, batch, H].
Tensor with_leading_one(Graph& g, Tensor t, const std::string& name);

/// Step order of direction d: forward for d == 0 unless the layer is reverse-only.
bool runs_backwards(const RnnOptions& o, int d);

}  // namespace corun::rnn::detail
