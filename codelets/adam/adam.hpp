// adam: one Adam / AdamW step (PyTorch's torch.optim.Adam / AdamW, single-tensor path, amsgrad off).
//   Buffers: W (readwrite), M (readwrite, first moment), V (readwrite, second moment; M and V are optimizer
//   state, zero at the start), G (read), H (read, [4]: codelets/optimizer_hyper.hpp).
//   i[0..3]: beta1, beta2, eps, weight_decay as float bits (float_bits); i[4]: 1 = decoupled (AdamW).
// Per element, in float:
//   Adam:  g = G + wd W (L2 added to the gradient; skipped when wd = 0)
//   AdamW: W = W * (1 - lr wd)            (decoupled weight decay, before the moments)
//   M = beta1 M + (1 - beta1) g;  V = beta2 V + (1 - beta2) g g
//   W = W - step_size * M / (sqrt(V) / bias2_sqrt + eps)      (eps outside the sqrt)
// lr, step_size = lr / (1 - beta1^t) and bias2_sqrt = sqrt(1 - beta2^t) come from H, so a schedule and the
// step count reach the kernel every iteration without touching the call.
#pragma once

#include "codelets/op.hpp"
#include "codelets/optimizer_hyper.hpp"

namespace corun::codelets {

void adam_ref(const OpCall& call, float* const* buf, int rank, int width);
void adam_fast(const OpCall& call, float* const* buf, int rank, int width);

struct AdamAttrs {
  float beta1, beta2, eps, weight_decay;
  bool decoupled;
};

inline std::array<int64_t, kMaxIntAttrs> adam_encode(const AdamAttrs& a) {
  std::array<int64_t, kMaxIntAttrs> i{};
  i[0] = float_bits(a.beta1);
  i[1] = float_bits(a.beta2);
  i[2] = float_bits(a.eps);
  i[3] = float_bits(a.weight_decay);
  i[4] = a.decoupled ? 1 : 0;
  return i;
}

inline AdamAttrs adam_decode(const OpCall& call) {
  return {float_from_bits(call.i[0]), float_from_bits(call.i[1]), float_from_bits(call.i[2]),
          float_from_bits(call.i[3]), call.i[4] != 0};
}

}  // namespace corun::codelets
