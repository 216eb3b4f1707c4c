// Reference phased_gate: the paper's piecewise formula, one element at a time.
#include "codelets/phased_gate/phased_gate.hpp"

#include <cmath>

namespace corun::codelets {

void phased_gate_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t batch = call.shapes[0][0], hidden = call.shapes[1][0];
  const double r_on = call.f, alpha = phased_gate_alpha(call);
  const Range rows = split_range(batch, rank, width);
  for (int64_t b = rows.begin; b < rows.end; ++b)
    for (int64_t j = 0; j < hidden; ++j) {
      const double tau = buf[1][j];
      double phi = std::fmod(static_cast<double>(buf[0][b]) - buf[2][j], tau) / tau;
      if (phi < 0.0) phi += 1.0;  // fmod keeps the sign of t - s; the phase is in [0, 1)
      double k;
      if (phi < 0.5 * r_on) {
        k = 2.0 * phi / r_on;
      } else if (phi < r_on) {
        k = 2.0 - 2.0 * phi / r_on;
      } else {
        k = alpha * phi;
      }
      buf[3][b * hidden + j] = static_cast<float>(k);
    }
}

// Reference phased_gate_grad: the chain rule of phased_gate.hpp, one unit at a time, written out per piece.
void phased_gate_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t batch = call.shapes[0][0], hidden = call.shapes[1][0];
  const double r_on = call.f, alpha = phased_gate_alpha(call);
  const Range units = split_range(hidden, rank, width);
  for (int64_t j = units.begin; j < units.end; ++j) {
    const double tau = buf[1][j], s = buf[2][j];
    double dtau = 0.0, ds = 0.0;
    for (int64_t b = 0; b < batch; ++b) {
      const double d = static_cast<double>(buf[0][b]) - s;  // t - s
      double phi = std::fmod(d, tau) / tau;
      if (phi < 0.0) phi += 1.0;
      double dk_dphi;
      if (phi < 0.5 * r_on) {
        dk_dphi = 2.0 / r_on;
      } else if (phi < r_on) {
        dk_dphi = -2.0 / r_on;
      } else {
        dk_dphi = alpha;
      }
      const double g = static_cast<double>(buf[3][b * hidden + j]) * dk_dphi;
      dtau += g * (-d / (tau * tau));
      ds += g * (-1.0 / tau);
    }
    buf[4][j] = static_cast<float>(dtau);
    buf[5][j] = static_cast<float>(ds);
  }
}

}  // namespace corun::codelets
