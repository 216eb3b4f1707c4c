// dropout (ONNX Dropout in training mode, PyTorch nn.Dropout): Y = keep(n) ? X / (1 - ratio) : 0, with
// ratio = f in [0, 1). Buffers X (R), step (R, [1]), Y (W); i[0] = seed.
// dropout_grad: dX = keep(n) ? dY / (1 - ratio) : 0. Buffers step (R, [1]), dY (R), dX (W); same attributes.
//
// The mask is a pure function of (seed, step, element index n): a counter-based hash (dropout_keep), no
// random-number state anywhere. So it is the same bits at every team width and in the forward and the
// backward (which recomputes it instead of storing it), and a run resumed at iteration k draws the masks
// of the uninterrupted run as long as `step` holds k again. `step` holds the iteration number as an exact
// non-negative integer in f32 (exact up to 2^24); the caller writes it before each Engine::run.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void dropout_ref(const OpCall& call, float* const* buf, int rank, int width);
void dropout_fast(const OpCall& call, float* const* buf, int rank, int width);
void dropout_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void dropout_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

/// 64 hash bits of (seed, step, n) (SplitMix64's finaliser applied to a Weyl-sequence mix).
uint64_t dropout_hash(uint64_t seed, uint64_t step, uint64_t n);
/// Whether element n is kept: the hash's top 24 bits as a uniform u in [0, 1), kept when u >= ratio.
inline bool dropout_keep(uint64_t seed, uint64_t step, uint64_t n, float ratio) {
  return static_cast<float>(dropout_hash(seed, step, n) >> 40) * (1.0f / 16777216.0f) >= ratio;
}
/// The step value of buffer `step` as an integer; throws corun::Error unless it is an integer in [0, 2^24].
uint64_t dropout_step(const float* step, const char* op);

}  // namespace corun::codelets
