// Fast batch_norm and batch_norm_grad: per channel, the sums run over contiguous spatial rows with double
// accumulators (the count is N * H * W, up to millions, where float sums lose digits), then one fused
// multiply-add per element with per-channel coefficients computed once.
#include "codelets/batch_norm/batch_norm.hpp"

#include <cmath>

namespace corun::codelets {
namespace {

// Sum of the channel's values and of their squared deviations from `mean` (the two-pass variance).
double channel_sum(const float* x, const BatchNormDims& d, int64_t c) {
  double sum = 0.0;
  for (int64_t n = 0; n < d.n; ++n) {
    const float* row = x + (n * d.c + c) * d.s;
    for (int64_t s = 0; s < d.s; ++s) sum += row[s];
  }
  return sum;
}

double channel_sq_dev(const float* x, const BatchNormDims& d, int64_t c, double mean) {
  double sq = 0.0;
  for (int64_t n = 0; n < d.n; ++n) {
    const float* row = x + (n * d.c + c) * d.s;
    for (int64_t s = 0; s < d.s; ++s) {
      const double dev = row[s] - mean;
      sq += dev * dev;
    }
  }
  return sq;
}

// out = x * a + b over the channel's rows.
void affine(const float* __restrict x, float* __restrict out, const BatchNormDims& d, int64_t c, float a, float b) {
  for (int64_t n = 0; n < d.n; ++n) {
    const float* row = x + (n * d.c + c) * d.s;
    float* o = out + (n * d.c + c) * d.s;
    for (int64_t s = 0; s < d.s; ++s) o[s] = row[s] * a + b;
  }
}

}  // namespace

void batch_norm_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d(call.shapes[0]);
  const bool training = call.i[0] != 0;
  const double m = batch_norm_momentum(call), eps = call.f;
  const Range r = split_range(d.c, rank, width);
  for (int64_t c = r.begin; c < r.end; ++c) {
    double mean, var;
    if (training) {
      const double count = static_cast<double>(d.count());
      mean = channel_sum(buf[0], d, c) / count;
      const double sq = channel_sq_dev(buf[0], d, c, mean);
      var = sq / count;
      buf[3][c] = static_cast<float>(m * buf[3][c] + (1.0 - m) * mean);
      buf[4][c] = static_cast<float>(m * buf[4][c] + (1.0 - m) * (sq / (count - 1.0)));
    } else {
      mean = buf[3][c];
      var = buf[4][c];
    }
    const double invstd = 1.0 / std::sqrt(var + eps);
    buf[6][c] = static_cast<float>(mean);
    buf[7][c] = static_cast<float>(invstd);
    const double a = buf[1][c] * invstd;
    affine(buf[0], buf[5], d, c, static_cast<float>(a), static_cast<float>(buf[2][c] - mean * a));
  }
}

void batch_norm_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d(call.shapes[0]);
  const bool training = call.i[0] != 0;
  const float *x = buf[0], *dy = buf[4];
  float* dx = buf[5];
  const double count = static_cast<double>(d.count());
  const Range r = split_range(d.c, rank, width);
  for (int64_t c = r.begin; c < r.end; ++c) {
    const double mean = buf[2][c], invstd = buf[3][c];
    double sdy = 0.0, sdyx = 0.0;  // sum dY and sum dY (X - mean); xhat's invstd applied once below
    for (int64_t n = 0; n < d.n; ++n) {
      const float* xr = x + (n * d.c + c) * d.s;
      const float* gr = dy + (n * d.c + c) * d.s;
      for (int64_t s = 0; s < d.s; ++s) {
        sdy += gr[s];
        sdyx += gr[s] * (xr[s] - mean);
      }
    }
    sdyx *= invstd;
    buf[6][c] = static_cast<float>(sdyx);
    buf[7][c] = static_cast<float>(sdy);
    // dX = k (dY - sdy / M - (X - mean) invstd sdyx / M) = k dY + p X + q, k = scale invstd.
    const double k = buf[1][c] * invstd;
    const double p = training ? -k * invstd * sdyx / count : 0.0;
    const double q = training ? -k * sdy / count - p * mean : 0.0;
    const float kf = static_cast<float>(k), pf = static_cast<float>(p), qf = static_cast<float>(q);
    for (int64_t n = 0; n < d.n; ++n) {
      const float* xr = x + (n * d.c + c) * d.s;
      const float* gr = dy + (n * d.c + c) * d.s;
      float* o = dx + (n * d.c + c) * d.s;
      for (int64_t s = 0; s < d.s; ++s) o[s] = kf * gr[s] + pf * xr[s] + qf;
    }
  }
}

}  // namespace corun::codelets
