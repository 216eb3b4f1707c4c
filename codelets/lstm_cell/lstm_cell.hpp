// lstm_cell: one LSTM step after the gate matmul, fused into one task (instead of split, three sigmoids,
// two tanh, three muls and an add).
//   buffers Z [B,4H] (pre-activations, column blocks i, f, g, o), Cp [B,H] (previous cell state)
//        -> C [B,H] = f*Cp + i*g,  H [B,H] = o*tanh(C),  A [B,4H] = (sigmoid(i), sigmoid(f), tanh(g),
//           sigmoid(o)),  TC [B,H] = tanh(C)
//   A and TC are what the backward needs; saving them avoids recomputing exp/tanh there.
// lstm_cell_grad: the backward of one cell.
//   buffers A, Cp, TC, dH, dC -> dZ [B,4H], dCp [B,H]
//   dC is the gradient of C from its readers outside the cell (the next step); the path through H is
//   added here: dc = dC + dH*o*(1 - TC^2); dZ = (dc*g*i(1-i), dc*Cp*f(1-f), dc*i*(1-g^2), dH*TC*o(1-o));
//   dCp = dc*f.
// Members split rows (batch entries): every output element of a row depends only on that row.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void lstm_cell_ref(const OpCall& call, float* const* buf, int rank, int width);
void lstm_cell_fast(const OpCall& call, float* const* buf, int rank, int width);
void lstm_cell_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void lstm_cell_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
