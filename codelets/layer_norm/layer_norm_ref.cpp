// Reference layer_norm and layer_norm_grad: the formulas of layer_norm.hpp in double, element by element.
#include "codelets/layer_norm/layer_norm.hpp"

#include <cmath>

namespace corun::codelets {

void layer_norm_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const LayerNormDims d(call.shapes[0], call.i[0]);
  const Range r = split_range(d.rows, rank, width);
  for (int64_t row = r.begin; row < r.end; ++row) {
    const float* x = buf[0] + row * d.cols;
    double sum = 0.0;
    for (int64_t j = 0; j < d.cols; ++j) sum += x[j];
    const double mean = sum / static_cast<double>(d.cols);
    double sq = 0.0;
    for (int64_t j = 0; j < d.cols; ++j) sq += (x[j] - mean) * (x[j] - mean);
    const double invstd = 1.0 / std::sqrt(sq / static_cast<double>(d.cols) + static_cast<double>(call.f));
    buf[4][row] = static_cast<float>(mean);
    buf[5][row] = static_cast<float>(invstd);
    for (int64_t j = 0; j < d.cols; ++j)
      buf[3][row * d.cols + j] = static_cast<float>((x[j] - mean) * invstd * buf[1][j] + buf[2][j]);
  }
}

void layer_norm_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const LayerNormDims d(call.shapes[0], call.i[0]);
  const float *x = buf[0], *scale = buf[1], *mean = buf[2], *invstd = buf[3], *dy = buf[4];
  const Range rows = split_range(d.rows, rank, width);
  for (int64_t row = rows.begin; row < rows.end; ++row) {
    double sg = 0.0, sgx = 0.0;
    for (int64_t j = 0; j < d.cols; ++j) {
      const int64_t e = row * d.cols + j;
      const double g = static_cast<double>(scale[j]) * dy[e];
      sg += g;
      sgx += g * (x[e] - mean[row]) * invstd[row];
    }
    const double n = static_cast<double>(d.cols);
    for (int64_t j = 0; j < d.cols; ++j) {
      const int64_t e = row * d.cols + j;
      const double xhat = (x[e] - mean[row]) * static_cast<double>(invstd[row]);
      const double g = static_cast<double>(scale[j]) * dy[e];
      buf[5][e] = static_cast<float>(invstd[row] * (g - sg / n - xhat * sgx / n));
    }
  }
  const Range cols = split_range(d.cols, rank, width);
  for (int64_t j = cols.begin; j < cols.end; ++j) {
    double ds = 0.0, db = 0.0;
    for (int64_t row = 0; row < d.rows; ++row) {
      const int64_t e = row * d.cols + j;
      ds += dy[e] * (x[e] - mean[row]) * static_cast<double>(invstd[row]);
      db += dy[e];
    }
    buf[6][j] = static_cast<float>(ds);
    buf[7][j] = static_cast<float>(db);
  }
}

}  // namespace corun::codelets
