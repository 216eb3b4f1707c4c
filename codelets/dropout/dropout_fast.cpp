// Fast dropout: the scale in f32, the keep threshold compared on the hash's integer bits (no float
// conversion per element), elements split in 16-aligned blocks.
#include "codelets/dropout/dropout.hpp"

#include <cmath>

namespace corun::codelets {
namespace {

void masked(const OpCall& call, const float* step, const float* in, float* out, int rank, int width, const char* op) {
  const uint64_t seed = static_cast<uint64_t>(call.i[0]), it = dropout_step(step, op);
  const float scale = 1.0f / (1.0f - call.f);
  // keep when (h >> 40) * 2^-24 >= ratio, i.e. (h >> 40) >= ceil(ratio * 2^24) (exact: both sides are
  // multiples of 2^-24 once the ratio's f32 value is scaled, which is exact for a power-of-two factor).
  const uint64_t threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(call.f) * 16777216.0));
  const Range r = split_range(call.shapes.back().numel(), rank, width, 16);
  for (int64_t n = r.begin; n < r.end; ++n)
    out[n] = (dropout_hash(seed, it, static_cast<uint64_t>(n)) >> 40) >= threshold ? in[n] * scale : 0.0f;
}

}  // namespace

void dropout_fast(const OpCall& call, float* const* buf, int rank, int width) {
  masked(call, buf[1], buf[0], buf[2], rank, width, "dropout");
}

void dropout_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  masked(call, buf[0], buf[1], buf[2], rank, width, "dropout_grad");
}

}  // namespace corun::codelets
