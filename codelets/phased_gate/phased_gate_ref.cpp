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

}  // namespace corun::codelets
