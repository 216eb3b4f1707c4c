// graphs/ops/rnn_cell.hpp — the shape rule the fused recurrent cells (lstm_cell, gru_cell) share: a 2-D state
// [batch, hidden] and gate pre-activations [batch, n_gates * hidden] beside it.
#pragma once

#include "graphs/ops/rules.hpp"

#include <string>

namespace corun::graphs {

/// One operand of a cell's shape rule: its label in errors, its shape, and what it is in words.
struct CellOperand {
  const char* label;  // "gates", "c_prev"
  const Shape& shape;
  const char* what;  // "gates", "cell state"
};

/// Fails naming both operands unless `state` is [batch, hidden] and `gates` is [batch, n_gates * hidden].
inline void check_cell_shapes(const ShapeQuery& q, const CellOperand& gates, int n_gates, const CellOperand& state) {
  if (state.shape.rank != 2)
    q.mismatch(std::string("the ") + state.what + " must be 2-D [batch, hidden]", gates.label, gates.shape,
               state.label, state.shape);
  if (gates.shape.rank != 2 || gates.shape[0] != state.shape[0] || gates.shape[1] != n_gates * state.shape[1])
    q.mismatch(std::string(gates.what) + " must be [batch, " + std::to_string(n_gates) + " * hidden] for a " +
                   state.what + " [batch, hidden]",
               gates.label, gates.shape, state.label, state.shape);
}

}  // namespace corun::graphs
