// codelets/optimizer_hyper.hpp — the per-step hyper-parameter tensor of the adam and sgd_wd update ops.
//
// A learning-rate schedule changes the rate every iteration and Adam's bias correction changes with the
// step, so neither can live in OpCall (an attribute change would change perfmodel footprints, and the
// graph's calls are fixed once bound). The host writes one small tensor H before every run instead
// (Graph::set_optimizer_step computes it in double, as PyTorch does in Python floats); the update kernels
// read it as their last buffer. Its layout:
#pragma once

#include "codelets/op.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace corun::codelets {

enum HyperSlot : int {
  kHyperLr = 0,         ///< the learning rate of this step (after schedule and warm-up)
  kHyperStepSize = 1,   ///< Adam: lr / (1 - beta1^step)
  kHyperBias2Sqrt = 2,  ///< Adam: sqrt(1 - beta2^step)
  kHyperStep = 3,       ///< the step number, 1-based (exact in a float up to 2^24 steps); saved by checkpoints
  kHyperCount = 4
};

/// Float attributes travel bit for bit in OpCall::i (OpCall has one float attribute).
inline int64_t float_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<int64_t>(bits);
}

inline float float_from_bits(int64_t stored) {
  const auto bits = static_cast<uint32_t>(stored);
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// H for step `step` (1-based) at learning rate `lr`: what Graph::set_optimizer_step writes. The bias
/// corrections are computed in double and rounded once, like PyTorch's Python-float scalars.
inline void fill_optimizer_hyper(float* h, int64_t step, double lr, double beta1, double beta2) {
  const double s = static_cast<double>(step);
  h[kHyperLr] = static_cast<float>(lr);
  h[kHyperStepSize] = static_cast<float>(lr / (1.0 - std::pow(beta1, s)));
  h[kHyperBias2Sqrt] = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, s)));
  h[kHyperStep] = static_cast<float>(step);
}

}  // namespace corun::codelets
