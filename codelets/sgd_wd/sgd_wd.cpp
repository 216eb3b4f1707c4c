// sgd_wd's kernels: both split W's elements over the team (16-aligned blocks for the fast one), so every
// width gives the same bits. The reference evaluates each element's formula in double and rounds once.
#include "codelets/sgd_wd/sgd_wd.hpp"

namespace corun::codelets {
namespace {

constexpr int kBlock = 16;

void update(float* __restrict w, float* __restrict v, const float* __restrict g, float lr, float mu, float wd,
            bool nesterov, int64_t n) {
  for (int64_t e = 0; e < n; ++e) {
    const float ge = g[e] + wd * w[e];
    const float ve = mu * v[e] + ge;
    v[e] = ve;
    const float d = nesterov ? ge + mu * ve : ve;
    w[e] = w[e] - lr * d;
  }
}

}  // namespace

void sgd_wd_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width, kBlock);
  if (r.size() <= 0) return;
  update(buf[0] + r.begin, buf[1] + r.begin, buf[2] + r.begin, buf[3][kHyperLr], float_from_bits(call.i[0]),
         float_from_bits(call.i[1]), call.i[2] != 0, r.size());
}

void sgd_wd_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const double lr = buf[3][kHyperLr], mu = float_from_bits(call.i[0]), wd = float_from_bits(call.i[1]);
  const bool nesterov = call.i[2] != 0;
  const Range r = split_range(numel(call, 0), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const double g = buf[2][e] + wd * buf[0][e];
    const double v = mu * buf[1][e] + g;
    buf[1][e] = static_cast<float>(v);
    buf[0][e] = static_cast<float>(buf[0][e] - lr * (nesterov ? g + mu * v : v));
  }
}

}  // namespace corun::codelets
