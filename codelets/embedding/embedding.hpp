// embedding: Y[n, :] = T[idx[n], :]; buffers idx (R, any shape, N elements), T (R, [V, D]), Y (W, [N, D]).
// embedding_grad: dT = scatter-add of dY rows at idx, in index order n = 0, 1, ...; buffers idx (R),
// dY (R, [N, D]), dT (W, [V, D]); rows of dT no index hits are zero.
//
// Indices travel in an f32 buffer (every tensor of a Graph is f32): each element holds an integer value
// exactly (f32 represents every integer up to 2^24 = 16,777,216, far above any vocabulary we build). A
// value that is not an integer or lies outside [0, V) makes the kernel throw corun::Error naming the
// position, the value and V (Engine::run rethrows it).
//
// Forward members own output rows; backward members own rows of dT (never the index list), each scanning
// all N indices in order, so every dT row is summed in the same order for every team width.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void embedding_ref(const OpCall& call, float* const* buf, int rank, int width);
void embedding_fast(const OpCall& call, float* const* buf, int rank, int width);
void embedding_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void embedding_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

/// The row index idx[n] as an integer; throws corun::Error if it is not an integer in [0, vocab).
int64_t embedding_row(const float* idx, int64_t n, int64_t vocab, const char* op);

}  // namespace corun::codelets
