// Reference batch_norm and batch_norm_grad: the formulas of batch_norm.hpp, one channel at a time, sums in
// double and the normalised value recomputed element by element, in either layout (BatchNormDims::at).
#include "codelets/batch_norm/batch_norm.hpp"

#include <cmath>

namespace corun::codelets {

void batch_norm_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d = BatchNormDims::of(call);
  const bool training = call.i[0] != 0;
  const double m = batch_norm_momentum(call), eps = call.f;
  const float* x = buf[0];
  const Range r = split_range(d.c, rank, width);
  for (int64_t c = r.begin; c < r.end; ++c) {
    double mean, var;
    if (training) {
      double sum = 0.0;
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t s = 0; s < d.s; ++s) sum += x[d.at(n, c, s)];
      mean = sum / static_cast<double>(d.count());
      double sq = 0.0;
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t s = 0; s < d.s; ++s) {
          const double dev = x[d.at(n, c, s)] - mean;
          sq += dev * dev;
        }
      var = sq / static_cast<double>(d.count());
      const double unbiased = sq / static_cast<double>(d.count() - 1);
      buf[3][c] = static_cast<float>(m * buf[3][c] + (1.0 - m) * mean);
      buf[4][c] = static_cast<float>(m * buf[4][c] + (1.0 - m) * unbiased);
    } else {
      mean = buf[3][c];
      var = buf[4][c];
    }
    const double invstd = 1.0 / std::sqrt(var + eps);
    buf[6][c] = static_cast<float>(mean);
    buf[7][c] = static_cast<float>(invstd);
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t s = 0; s < d.s; ++s) {
        const int64_t e = d.at(n, c, s);
        buf[5][e] = static_cast<float>(buf[1][c] * (x[e] - mean) * invstd + buf[2][c]);
      }
  }
}

void batch_norm_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d = BatchNormDims::of(call);
  const bool training = call.i[0] != 0;
  const float *x = buf[0], *dy = buf[4];
  const Range r = split_range(d.c, rank, width);
  for (int64_t c = r.begin; c < r.end; ++c) {
    const double mean = buf[2][c], invstd = buf[3][c], scale = buf[1][c];
    double sdy = 0.0, sdyx = 0.0;
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t s = 0; s < d.s; ++s) {
        const int64_t e = d.at(n, c, s);
        sdy += dy[e];
        sdyx += dy[e] * (x[e] - mean) * invstd;
      }
    buf[6][c] = static_cast<float>(sdyx);
    buf[7][c] = static_cast<float>(sdy);
    const double count = static_cast<double>(d.count());
    for (int64_t n = 0; n < d.n; ++n)
      for (int64_t s = 0; s < d.s; ++s) {
        const int64_t e = d.at(n, c, s);
        const double xhat = (x[e] - mean) * invstd;
        const double g = training ? dy[e] - sdy / count - xhat * sdyx / count : dy[e];
        buf[5][e] = static_cast<float>(scale * invstd * g);
      }
  }
}

}  // namespace corun::codelets
