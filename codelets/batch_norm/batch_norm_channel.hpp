// The per-channel formulas of the fast batch norm kernels, shared by the NCHW (batch_norm_fast.cpp) and blocked
// (batch_norm_blocked.cpp) ones: given a channel's sums, each writes the channel's outputs and returns the
// coefficients of the per-element pass. One copy of these expressions is what keeps the two layouts' bits equal.
#pragma once

#include "codelets/batch_norm/batch_norm.hpp"

#include <cmath>

namespace corun::codelets {

/// Training: channel c's running statistics from its mean and its sum of squared deviations `sq` over `count`
/// values; returns the biased variance.
inline double batch_norm_update_running(float* const* buf, int64_t c, double momentum, double mean, double sq,
                                        double count) {
  buf[3][c] = static_cast<float>(momentum * buf[3][c] + (1.0 - momentum) * mean);
  buf[4][c] = static_cast<float>(momentum * buf[4][c] + (1.0 - momentum) * (sq / (count - 1.0)));
  return sq / count;
}

/// Y = X * scale + shift for channel c.
struct BatchNormAffine {
  float scale, shift;
};

/// Channel c's mean and invstd outputs from its mean and variance, and its affine coefficients.
inline BatchNormAffine batch_norm_affine(float* const* buf, int64_t c, double mean, double var, double eps) {
  const double invstd = 1.0 / std::sqrt(var + eps);
  buf[6][c] = static_cast<float>(mean);
  buf[7][c] = static_cast<float>(invstd);
  const double a = buf[1][c] * invstd;
  return {static_cast<float>(a), static_cast<float>(buf[2][c] - mean * a)};
}

/// dX = k dY + p X + q for channel c.
struct BatchNormGradCoefficients {
  float k, p, q;
};

/// Channel c's dscale and dbias outputs from sum dY and sum dY (X - mean), and its dX coefficients:
/// dX = k (dY - sdy / M - (X - mean) invstd sdyx / M) = k dY + p X + q, k = scale invstd.
inline BatchNormGradCoefficients batch_norm_grad_coefficients(float* const* buf, int64_t c, bool training, double mean,
                                                              double sum_dy, double sum_dyx, double count) {
  const double invstd = buf[3][c];
  const double sdy = sum_dy, sdyx = sum_dyx * invstd;
  buf[6][c] = static_cast<float>(sdyx);
  buf[7][c] = static_cast<float>(sdy);
  const double k = buf[1][c] * invstd;
  const double p = training ? -k * invstd * sdyx / count : 0.0;
  const double q = training ? -k * sdy / count - p * mean : 0.0;
  return {static_cast<float>(k), static_cast<float>(p), static_cast<float>(q)};
}

}  // namespace corun::codelets
