// sgd_momentum: V = mu V + G; W -= f V (PyTorch's SGD with momentum, no dampening). Buffers W (readwrite),
// V (readwrite, the velocity: optimizer state, zero at the start), G. f is the learning rate; mu is a float
// stored bit for bit in i[0] (OpCall has one float attribute; sgd_momentum_mu() reads it back).
#pragma once

#include "codelets/op.hpp"

#include <cstring>

namespace corun::codelets {

void sgd_momentum_ref(const OpCall& call, float* const* buf, int rank, int width);
void sgd_momentum_fast(const OpCall& call, float* const* buf, int rank, int width);

inline int64_t sgd_momentum_encode(float mu) {
  uint32_t bits;
  std::memcpy(&bits, &mu, sizeof bits);
  return static_cast<int64_t>(bits);
}

inline float sgd_momentum_mu(const OpCall& call) {
  const auto bits = static_cast<uint32_t>(call.i[0]);
  float mu;
  std::memcpy(&mu, &bits, sizeof mu);
  return mu;
}

}  // namespace corun::codelets
