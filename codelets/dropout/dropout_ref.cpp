// Reference dropout: element by element, the scale as a double.
#include "codelets/dropout/dropout.hpp"

#include "base/check.hpp"

#include <cmath>

namespace corun::codelets {

uint64_t dropout_hash(uint64_t seed, uint64_t step, uint64_t n) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + step * 0xD1B54A32D192ED03ull + n * 0x8CB92BA72F3D8DD7ull;
  for (int round = 0; round < 2; ++round) {  // two finaliser rounds: neighbouring n decorrelate fully
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
  }
  return z;
}

uint64_t dropout_step(const float* step, const char* op) {
  const float v = step[0];
  CORUN_CHECK(v >= 0.0f && v <= 16777216.0f && std::floor(v) == v, Status::invalid_argument,
              op << ": the step input holds " << v
                 << ", not an iteration number; write the iteration as an exact integer in 0..2^24 before each run");
  return static_cast<uint64_t>(v);
}

namespace {

void masked(const OpCall& call, const float* step, const float* in, float* out, int rank, int width, const char* op) {
  const uint64_t seed = static_cast<uint64_t>(call.i[0]), it = dropout_step(step, op);
  const double scale = 1.0 / (1.0 - static_cast<double>(call.f));
  const Range r = split_range(call.shapes.back().numel(), rank, width);
  for (int64_t n = r.begin; n < r.end; ++n)
    out[n] = dropout_keep(seed, it, static_cast<uint64_t>(n), call.f) ? static_cast<float>(in[n] * scale) : 0.0f;
}

}  // namespace

void dropout_ref(const OpCall& call, float* const* buf, int rank, int width) {
  masked(call, buf[1], buf[0], buf[2], rank, width, "dropout");
}

void dropout_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  masked(call, buf[0], buf[1], buf[2], rank, width, "dropout_grad");
}

}  // namespace corun::codelets
