// gru_cell: one GRU step after the two projections, fused into one task. ONNX's GRU with
// linear_before_reset = 1, which is PyTorch's nn.GRU and what it exports (gate blocks in ONNX order z, r, n):
//   buffers XP [B,3H] (input projection X W^T + Wb, column blocks z, r, n),
//           HP [B,3H] (recurrent projection Hp R^T + Rb, same blocks), Hp [B,H] (previous hidden state)
//        -> H [B,H], A [B,3H]
//   z = sigmoid(XPz + HPz), r = sigmoid(XPr + HPr), n = tanh(XPn + r * HPn), H = (1 - z) * n + z * Hp,
//   A = (z, r, n): what the backward needs, saved so it never recomputes exp/tanh.
// Both projections stay matmul nodes (the input one for all time steps at once); the recurrent bias of the
// n block sits inside HP, where ONNX and PyTorch put it (r multiplies it too).
// gru_cell_grad: the backward of one cell.
//   buffers A, HP, Hp, dH -> dXP [B,3H], dHP [B,3H], dHp [B,H]
//   dn = dH (1 - z) (1 - n^2), dz = dH (Hp - n) z (1 - z), dr = dn HPn r (1 - r);
//   dXP = (dz, dr, dn), dHP = (dz, dr, dn * r), dHp = dH * z (the path through HP reaches Hp through the
//   recurrent matmul's own backward).
// Members split rows (batch entries): every output element of a row depends only on that row.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void gru_cell_ref(const OpCall& call, float* const* buf, int rank, int width);
void gru_cell_fast(const OpCall& call, float* const* buf, int rank, int width);
void gru_cell_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void gru_cell_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
