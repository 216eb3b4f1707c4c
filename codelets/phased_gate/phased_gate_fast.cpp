// Fast phased_gate: per row, the same phase arithmetic in double (f32 phases would move samples across
// the open/closed boundaries) with the reciprocals hoisted and the branches turned into selects.
#include "codelets/phased_gate/phased_gate.hpp"

#include <cmath>

namespace corun::codelets {

void phased_gate_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t batch = call.shapes[0][0], hidden = call.shapes[1][0];
  const double r_on = call.f, alpha = phased_gate_alpha(call);
  const double half = 0.5 * r_on, slope = 2.0 / r_on;
  const Range rows = split_range(batch, rank, width);
  const float* __restrict tau = buf[1];
  const float* __restrict shift = buf[2];
  for (int64_t b = rows.begin; b < rows.end; ++b) {
    const double t = buf[0][b];
    float* __restrict k = buf[3] + b * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      const double p = tau[j];
      double phi = std::fmod(t - shift[j], p) / p;
      phi = phi < 0.0 ? phi + 1.0 : phi;
      const double open = phi < half ? slope * phi : 2.0 - slope * phi;
      k[j] = static_cast<float>(phi < r_on ? open : alpha * phi);
    }
  }
}

// Fast phased_gate_grad: per unit, reciprocals hoisted and dk/dphi as a select; dphi/ds = -1/tau is
// factored out of the sum over b (dS = -sum(g) / tau), dphi/dtau's 1/tau^2 likewise.
void phased_gate_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t batch = call.shapes[0][0], hidden = call.shapes[1][0];
  const double r_on = call.f, alpha = phased_gate_alpha(call);
  const double half = 0.5 * r_on, slope = 2.0 / r_on;
  const Range units = split_range(hidden, rank, width);
  const float* __restrict t = buf[0];
  const float* __restrict dk = buf[3];
  for (int64_t j = units.begin; j < units.end; ++j) {
    const double tau = buf[1][j], s = buf[2][j], inv = 1.0 / tau;
    double sum_gd = 0.0, sum_g = 0.0;  // sum of g (t - s) and of g, g = dK dk/dphi
    for (int64_t b = 0; b < batch; ++b) {
      const double d = static_cast<double>(t[b]) - s;
      double phi = std::fmod(d, tau) * inv;
      phi = phi < 0.0 ? phi + 1.0 : phi;
      const double dk_dphi = phi < half ? slope : phi < r_on ? -slope : alpha;
      const double g = static_cast<double>(dk[b * hidden + j]) * dk_dphi;
      sum_gd += g * d;
      sum_g += g;
    }
    buf[4][j] = static_cast<float>(-sum_gd * inv * inv);
    buf[5][j] = static_cast<float>(-sum_g * inv);
  }
}

}  // namespace corun::codelets
