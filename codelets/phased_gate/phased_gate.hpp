// phased_gate: the time gate k_t of the Phased LSTM (Neil, Pfeiffer, Liu 2016, eq. 11):
//   phi = ((t - s) mod tau) / tau
//   k   = 2 phi / r_on        if phi < r_on / 2      (opening)
//         2 - 2 phi / r_on    if phi < r_on          (closing)
//         alpha phi           otherwise              (closed; leaks during training)
// for every sample b (timestamp t = T[b]) and unit j (period tau = TAU[j], shift s = S[j]).
// Buffers: T (R, [B]), TAU (R, [H]), S (R, [H]), K (W, [B, H]). f = r_on; i[0] holds the bits of alpha
// (an f32; phased_gate_alpha reads it). The cell then mixes c_t = k c~_t + (1 - k) c_{t-1}, same for h,
// with ordinary elementwise nodes (models/lstm). Members split K's rows; phases are computed in double.
//
// phased_gate_grad: the gradients of a loss L w.r.t. the periods and shifts, from dK = dL/dK. Inside one
// piece of the formula the wrap count n = floor((t - s) / tau) is constant, so phi = (t - s) / tau - n and
//   dphi/dtau = -(t - s) / tau^2,   dphi/ds = -1 / tau,
//   dk/dphi   = 2 / r_on (opening), -2 / r_on (closing), alpha (closed),
// with the piece chosen exactly as the forward chooses it (the one-sided derivative at the kinks, where k
// has none). dTAU[j] = sum_b dK[b,j] dk/dphi dphi/dtau and dS[j] likewise, summed over b in order in
// double. Buffers: T, TAU, S, dK (R) -> dTAU [H], dS [H] (W); f and i[0] as phased_gate. Members split the
// units j (the sum over b is never split), so the result does not depend on the width. No gradient for T.
#pragma once

#include "codelets/op.hpp"

#include <cstring>

namespace corun::codelets {

inline int64_t phased_gate_alpha_bits(float alpha) {
  uint32_t bits;
  std::memcpy(&bits, &alpha, sizeof bits);
  return static_cast<int64_t>(bits);
}
inline float phased_gate_alpha(const OpCall& call) {
  const auto bits = static_cast<uint32_t>(call.i[0]);
  float alpha;
  std::memcpy(&alpha, &bits, sizeof alpha);
  return alpha;
}

void phased_gate_ref(const OpCall& call, float* const* buf, int rank, int width);
void phased_gate_fast(const OpCall& call, float* const* buf, int rank, int width);
void phased_gate_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void phased_gate_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
