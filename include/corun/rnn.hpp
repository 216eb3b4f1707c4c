// corun/rnn.hpp — recurrent layers with ONNX semantics (opset 7-22 LSTM and GRU), built from corun ops.
//
// Each builder maps one ONNX node onto a graph one-to-one: the same inputs in the same layouts and gate
// orders, the same outputs. The layer is unrolled over the (fixed) sequence length:
//   per direction, ONE input projection for every time step, [seq*batch, input] x W^T (+ Wb), sliced per
//   step; then per step the recurrent matmul h R^T and the fused cell (Graph::lstm_cell, Graph::gru_cell).
// A reverse direction walks the steps from the last to the first and writes Y at each step's own position.
//
//   auto out = corun::rnn::gru(g, x, w, r, b, corun::Tensor{}, {.direction = corun::rnn::Direction::bidirectional});
//   // out.y [seq, 2, batch, H], out.y_h [2, batch, H]
//
// Not supported (each is a clear corun::Error from the builder, naming the layer): peepholes (LSTM input
// P), sequence_lens, activations other than the defaults, activation_alpha/beta, a finite clip,
// LSTM input_forget = 1, layout = 1, and GRU linear_before_reset = 0.
#pragma once

#include <corun/graph.hpp>

#include <optional>
#include <string>
#include <vector>

namespace corun::rnn {

/// ONNX's `direction` attribute.
enum class Direction { forward, reverse, bidirectional };

/// "forward", "reverse" or "bidirectional" (ONNX's spelling); throws corun::Error naming the valid ones.
Direction parse_direction(const std::string& text);

/// The attributes and optional inputs an ONNX LSTM or GRU node may carry besides X, W, R, B and the initial
/// states. Defaults are ONNX's, except where noted.
struct RnnOptions {
  Direction direction = Direction::forward;
  /// ONNX hidden_size; 0: taken from R. When set it must agree with W, R and B.
  int64_t hidden_size = 0;
  /// Empty (the defaults), or ONNX's names per direction: LSTM "Sigmoid","Tanh","Tanh"; GRU "Sigmoid","Tanh".
  /// Any other list is refused.
  std::vector<std::string> activations{};
  /// ONNX activation_alpha / activation_beta: must be empty (no default activation takes them).
  std::vector<float> activation_alpha{}, activation_beta{};
  /// ONNX clip: unset or infinite (no clipping); a finite value is refused.
  std::optional<float> clip{};
  /// ONNX layout: 0 ([seq, batch, ...], the default); 1 is refused.
  int layout = 0;
  /// LSTM only: ONNX input_forget (couple the input and forget gates); 1 is refused.
  int input_forget = 0;
  /// GRU only: 1 applies the recurrent projection before the reset gate, n = tanh(Xn + r (h Rn^T + Rbn)),
  /// PyTorch's formulation and what it exports. NOTE: ONNX's default is 0, which this builder refuses (the
  /// reset gate would sit between two matmuls): an importer must pass the node's value, 0 when absent.
  int linear_before_reset = 1;
  /// ONNX sequence_lens (input 4) and LSTM peepholes P (input 7): must be invalid Tensors.
  Tensor sequence_lens{}, peepholes{};
  /// Prefix of every node and value the layer adds ("" -> "lstm_<n>" / "gru_<n>").
  std::string name{};
};

/// Y [seq, dirs, batch, H]: every step's hidden state; Y_h [dirs, batch, H]: the last step's (for a reverse
/// direction, the state after step 0); Y_c [dirs, batch, H]: the last cell state (LSTM only).
struct RnnOutputs {
  Tensor y, y_h, y_c;
};

/// ONNX LSTM: X [seq, batch, input], W [dirs, 4H, input], R [dirs, 4H, H] (gate blocks i, o, f, c, ONNX's
/// order), B [dirs, 8H] (Wb then Rb) or invalid (zeros), initial_h / initial_c [dirs, batch, H] or invalid
/// (zeros). dirs is 2 for Direction::bidirectional (forward first), else 1. The gate blocks are reordered
/// into Graph::lstm_cell's i, f, g, o by slicing W, R and B inside the graph, so gradients reach the ONNX
/// tensors themselves. f = sigmoid, g = h = tanh (the defaults).
RnnOutputs lstm(Graph& g, Tensor x, Tensor w, Tensor r, Tensor b, Tensor initial_h, Tensor initial_c,
                const RnnOptions& options = {});

/// ONNX GRU: X [seq, batch, input], W [dirs, 3H, input], R [dirs, 3H, H] (gate blocks z, r, h, ONNX's
/// order; PyTorch's weight_ih is r, z, n), B [dirs, 6H] (Wb then Rb) or invalid, initial_h [dirs, batch, H]
/// or invalid (zeros). Only linear_before_reset = 1 (see RnnOptions). Returns {Y, Y_h} (y_c invalid).
RnnOutputs gru(Graph& g, Tensor x, Tensor w, Tensor r, Tensor b, Tensor initial_h, const RnnOptions& options = {});

}  // namespace corun::rnn
