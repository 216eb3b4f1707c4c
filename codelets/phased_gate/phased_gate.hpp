// phased_gate: the time gate k_t of the Phased LSTM (Neil, Pfeiffer, Liu 2016, eq. 11):
//   phi = ((t - s) mod tau) / tau
//   k   = 2 phi / r_on        if phi < r_on / 2      (opening)
//         2 - 2 phi / r_on    if phi < r_on          (closing)
//         alpha phi           otherwise              (closed; leaks during training)
// for every sample b (timestamp t = T[b]) and unit j (period tau = TAU[j], shift s = S[j]).
// Buffers: T (R, [B]), TAU (R, [H]), S (R, [H]), K (W, [B, H]). f = r_on; i[0] holds the bits of alpha
// (an f32; phased_gate_alpha reads it). The cell then mixes c_t = k c~_t + (1 - k) c_{t-1}, same for h,
// with ordinary elementwise nodes (models/lstm). Members split K's rows; phases are computed in double.
// No gradient: T, TAU and S are inputs (the periods and shifts are fixed at initialisation, not learned).
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

}  // namespace corun::codelets
