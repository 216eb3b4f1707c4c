// Fast layer_norm and layer_norm_grad: row sums with double accumulators (rows of thousands of floats),
// then float loops over contiguous rows with per-row coefficients computed once. The parameter gradients
// walk the rows in order for a block of this member's columns at a time, so the inner loop is contiguous.
// A row's sums are spread over kLanes accumulators, column j on lane j % kLanes, which meet in a fixed tree:
// one double accumulator made every sum a chain of dependent adds (as the batch norm's were,
// batch_norm_fast.cpp). The order depends on the shape only, and every copy of CORUN_SIMD_CLONES gives the
// same bits.
#include "codelets/layer_norm/layer_norm.hpp"
#include "codelets/simd_clones.hpp"

#include <algorithm>
#include <cmath>

namespace corun::codelets {
namespace {

constexpr int64_t kColumnBlock = 256;  // doubles on the stack per accumulator block (4 KiB for two)
constexpr int kLanes = 16;

// Per-lane partial sums of a row.
struct Lanes {
  double v[kLanes] = {};
  double total() {
    for (int half = kLanes / 2; half > 0; half /= 2)
      for (int l = 0; l < half; ++l) v[l] += v[l + half];
    return v[0];
  }
};

// add(lane, j) for every column j of a row, in order: column j on lane j % kLanes.
template <typename Add>
inline void for_lanes(int64_t cols, Add add) {
  int64_t j = 0;
  for (; j + kLanes <= cols; j += kLanes)
    for (int l = 0; l < kLanes; ++l) add(l, j + l);
  for (int l = 0; j + l < cols; ++l) add(l, j + l);
}

}  // namespace

CORUN_SIMD_CLONES void layer_norm_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const LayerNormDims d(call.shapes[0], call.i[0]);
  const float *scale = buf[1], *bias = buf[2];
  const Range r = split_range(d.rows, rank, width);
  for (int64_t row = r.begin; row < r.end; ++row) {
    const float* __restrict x = buf[0] + row * d.cols;
    float* __restrict y = buf[3] + row * d.cols;
    Lanes sum, sq;
    for_lanes(d.cols, [&](int l, int64_t j) { sum.v[l] += x[j]; });
    const double mean = sum.total() / static_cast<double>(d.cols);
    for_lanes(d.cols, [&](int l, int64_t j) {
      const double dev = x[j] - mean;
      sq.v[l] += dev * dev;
    });
    const double invstd = 1.0 / std::sqrt(sq.total() / static_cast<double>(d.cols) + static_cast<double>(call.f));
    buf[4][row] = static_cast<float>(mean);
    buf[5][row] = static_cast<float>(invstd);
    const float a = static_cast<float>(invstd), b = static_cast<float>(-mean * invstd);
    for (int64_t j = 0; j < d.cols; ++j) y[j] = (x[j] * a + b) * scale[j] + bias[j];
  }
}

CORUN_SIMD_CLONES void layer_norm_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const LayerNormDims d(call.shapes[0], call.i[0]);
  const float *x = buf[0], *scale = buf[1], *mean = buf[2], *invstd = buf[3], *dy = buf[4];
  const Range rows = split_range(d.rows, rank, width);
  const double n = static_cast<double>(d.cols);
  for (int64_t row = rows.begin; row < rows.end; ++row) {
    const float* __restrict xr = x + row * d.cols;
    const float* __restrict gr = dy + row * d.cols;
    float* __restrict dx = buf[5] + row * d.cols;
    const double mu = mean[row], is = invstd[row];
    Lanes lane_g, lane_gx;  // sum g and sum g (X - mean), g = scale dY
    for_lanes(d.cols, [&](int l, int64_t j) {
      const double g = static_cast<double>(scale[j]) * gr[j];
      lane_g.v[l] += g;
      lane_gx.v[l] += g * (xr[j] - mu);
    });
    const double sg = lane_g.total(), sgx = lane_gx.total();
    // dX = is (g - sg / n - (X - mu) is^2 sgx / n) = is g + p X + q.
    const double p = -is * is * is * sgx / n;
    const double q = -is * sg / n - p * mu;
    const float isf = static_cast<float>(is), pf = static_cast<float>(p), qf = static_cast<float>(q);
    for (int64_t j = 0; j < d.cols; ++j) dx[j] = isf * (scale[j] * gr[j]) + pf * xr[j] + qf;
  }
  const Range cols = split_range(d.cols, rank, width);
  double ds[kColumnBlock], db[kColumnBlock];
  for (int64_t j0 = cols.begin; j0 < cols.end; j0 += kColumnBlock) {
    const int64_t nb = std::min(kColumnBlock, cols.end - j0);
    std::fill(ds, ds + nb, 0.0);
    std::fill(db, db + nb, 0.0);
    for (int64_t row = 0; row < d.rows; ++row) {
      const float* xr = x + row * d.cols + j0;
      const float* gr = dy + row * d.cols + j0;
      const double mu = mean[row], is = invstd[row];
      for (int64_t j = 0; j < nb; ++j) {
        ds[j] += gr[j] * ((xr[j] - mu) * is);
        db[j] += gr[j];
      }
    }
    for (int64_t j = 0; j < nb; ++j) {
      buf[6][j0 + j] = static_cast<float>(ds[j]);
      buf[7][j0 + j] = static_cast<float>(db[j]);
    }
  }
}

}  // namespace corun::codelets
