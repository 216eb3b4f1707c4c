// softmax_xent: P = softmax(Z) per row, L[b] = -sum_c T[b,c] * log P[b,c], computed as
//   L[b] = -sum_c T[b,c] * (Z[b,c] - max_c Z[b,.] - log sum_c exp(Z[b,c] - max))   (log-sum-exp).
// Buffers Z[B,C], T[B,C], P[B,C] (out), L[B] (out).
// softmax_xent_grad: dZ = (P - T) * dL[b]; buffers P[B,C], T[B,C], dL[B], dZ[B,C] (out).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void softmax_xent_ref(const OpCall& call, float* const* buf, int rank, int width);
void softmax_xent_fast(const OpCall& call, float* const* buf, int rank, int width);
void softmax_xent_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void softmax_xent_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
