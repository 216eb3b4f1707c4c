// Reference LSTM cell: the equations of lstm_cell.hpp element by element in double, each output rounded
// once to float.
#include "codelets/lstm_cell/lstm_cell.hpp"

#include <cmath>

namespace corun::codelets {
namespace {

double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

void lstm_cell_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t rows = call.shapes[1][0], H = call.shapes[1][1];
  const Range r = split_range(rows, rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    for (int64_t u = 0; u < H; ++u) {
      const float* z = buf[0] + b * 4 * H + u;
      const double i = sigm(z[0]), f = sigm(z[H]), g = std::tanh(static_cast<double>(z[2 * H])), o = sigm(z[3 * H]);
      const int64_t e = b * H + u;
      const double c = f * buf[1][e] + i * g;
      const double tc = std::tanh(c);
      buf[2][e] = static_cast<float>(c);
      buf[3][e] = static_cast<float>(o * tc);
      float* a = buf[4] + b * 4 * H + u;
      a[0] = static_cast<float>(i), a[H] = static_cast<float>(f), a[2 * H] = static_cast<float>(g);
      a[3 * H] = static_cast<float>(o);
      buf[5][e] = static_cast<float>(tc);
    }
}

void lstm_cell_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t rows = call.shapes[1][0], H = call.shapes[1][1];
  const Range r = split_range(rows, rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    for (int64_t u = 0; u < H; ++u) {
      const float* a = buf[0] + b * 4 * H + u;
      const double i = a[0], f = a[H], g = a[2 * H], o = a[3 * H];
      const int64_t e = b * H + u;
      const double cp = buf[1][e], tc = buf[2][e], dh = buf[3][e];
      const double dc = buf[4][e] + dh * o * (1.0 - tc * tc);
      float* dz = buf[5] + b * 4 * H + u;
      dz[0] = static_cast<float>(dc * g * i * (1.0 - i));
      dz[H] = static_cast<float>(dc * cp * f * (1.0 - f));
      dz[2 * H] = static_cast<float>(dc * i * (1.0 - g * g));
      dz[3 * H] = static_cast<float>(dh * tc * o * (1.0 - o));
      buf[6][e] = static_cast<float>(dc * f);
    }
}

}  // namespace corun::codelets
