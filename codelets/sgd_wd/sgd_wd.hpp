// sgd_wd: one step of PyTorch's torch.optim.SGD with weight decay and/or Nesterov momentum (dampening 0).
//   Buffers: W (readwrite), V (readwrite, the velocity: optimizer state, zero at the start), G (read),
//   H (read, [4]: codelets/optimizer_hyper.hpp; the learning rate is H[kHyperLr]).
//   i[0]: momentum mu, i[1]: weight_decay, both as float bits (float_bits); i[2]: 1 = Nesterov.
// Per element, in float:
//   g = G + wd W;  V = mu V + g;  d = nesterov ? g + mu V : V;  W = W - lr d
// (PyTorch's first step sets V = g; mu * 0 + g is the same value.) Plain SGD and SGD with momentum but no
// weight decay keep their own ops (sgd, sgd_momentum), whose bits are unchanged.
#pragma once

#include "codelets/op.hpp"
#include "codelets/optimizer_hyper.hpp"

namespace corun::codelets {

void sgd_wd_ref(const OpCall& call, float* const* buf, int rank, int width);
void sgd_wd_fast(const OpCall& call, float* const* buf, int rank, int width);

inline std::array<int64_t, kMaxIntAttrs> sgd_wd_encode(float momentum, float weight_decay, bool nesterov) {
  std::array<int64_t, kMaxIntAttrs> i{};
  i[0] = float_bits(momentum);
  i[1] = float_bits(weight_decay);
  i[2] = nesterov ? 1 : 0;
  return i;
}

}  // namespace corun::codelets
