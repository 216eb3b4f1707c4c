// Reference GRU cell: the equations of gru_cell.hpp element by element in double, each output rounded once
// to float.
#include "codelets/gru_cell/gru_cell.hpp"

#include <cmath>

namespace corun::codelets {
namespace {

double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

void gru_cell_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t rows = call.shapes[2][0], H = call.shapes[2][1];
  const Range r = split_range(rows, rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    for (int64_t u = 0; u < H; ++u) {
      const float* xp = buf[0] + b * 3 * H + u;
      const float* hp = buf[1] + b * 3 * H + u;
      const int64_t e = b * H + u;
      const double z = sigm(static_cast<double>(xp[0]) + hp[0]);
      const double rr = sigm(static_cast<double>(xp[H]) + hp[H]);
      const double n = std::tanh(xp[2 * H] + rr * hp[2 * H]);
      buf[3][e] = static_cast<float>((1.0 - z) * n + z * buf[2][e]);
      float* a = buf[4] + b * 3 * H + u;
      a[0] = static_cast<float>(z), a[H] = static_cast<float>(rr), a[2 * H] = static_cast<float>(n);
    }
}

void gru_cell_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t rows = call.shapes[2][0], H = call.shapes[2][1];
  const Range r = split_range(rows, rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    for (int64_t u = 0; u < H; ++u) {
      const float* a = buf[0] + b * 3 * H + u;
      const double z = a[0], rr = a[H], n = a[2 * H];
      const double hpn = buf[1][b * 3 * H + 2 * H + u];
      const int64_t e = b * H + u;
      const double hprev = buf[2][e], dh = buf[3][e];
      const double dn = dh * (1.0 - z) * (1.0 - n * n);
      const double dz = dh * (hprev - n) * z * (1.0 - z);
      const double dr = dn * hpn * rr * (1.0 - rr);
      float* dxp = buf[4] + b * 3 * H + u;
      float* dhp = buf[5] + b * 3 * H + u;
      dxp[0] = dhp[0] = static_cast<float>(dz);
      dxp[H] = dhp[H] = static_cast<float>(dr);
      dxp[2 * H] = static_cast<float>(dn);
      dhp[2 * H] = static_cast<float>(dn * rr);
      buf[6][e] = static_cast<float>(dh * z);
    }
}

}  // namespace corun::codelets
