// Reference softmax cross-entropy in double, straight from the formulas; members own whole rows.
#include "codelets/softmax_xent/softmax_xent.hpp"

#include <algorithm>
#include <cmath>

namespace corun::codelets {

void softmax_xent_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t classes = call.shapes[0][1];
  const Range rows = split_range(call.shapes[0][0], rank, width);
  for (int64_t b = rows.begin; b < rows.end; ++b) {
    const float* z = buf[0] + b * classes;
    const float* t = buf[1] + b * classes;
    float* p = buf[2] + b * classes;
    double max = z[0];
    for (int64_t c = 1; c < classes; ++c) max = std::max(max, static_cast<double>(z[c]));
    double sum = 0.0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(z[c] - max);
    const double log_sum = std::log(sum);
    double loss = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      p[c] = static_cast<float>(std::exp(z[c] - max) / sum);
      loss -= static_cast<double>(t[c]) * (z[c] - max - log_sum);
    }
    buf[3][b] = static_cast<float>(loss);
  }
}

void softmax_xent_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t classes = call.shapes[0][1];
  const Range r = split_range(numel(call, 3), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[3][e] = (buf[0][e] - buf[1][e]) * buf[2][e / classes];
}

}  // namespace corun::codelets
