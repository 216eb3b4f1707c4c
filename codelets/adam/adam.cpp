// adam's kernels: both split W's elements over the team (16-aligned blocks for the fast one), so every
// width gives the same bits. The reference evaluates each element's formula in double and rounds once.
#include "codelets/adam/adam.hpp"

#include <cmath>

namespace corun::codelets {
namespace {

constexpr int kBlock = 16;

struct Step {
  float lr, step_size, bias2_sqrt;
};

Step read_hyper(const OpCall& call, float* const* buf) {
  const float* h = buf[call.nbuffers() - 1];
  return {h[kHyperLr], h[kHyperStepSize], h[kHyperBias2Sqrt]};
}

void update(float* __restrict w, float* __restrict m, float* __restrict v, const float* __restrict g,
            const AdamAttrs& a, const Step& s, int64_t n) {
  const float decay = a.decoupled ? 1.0f - s.lr * a.weight_decay : 1.0f;
  const float l2 = a.decoupled ? 0.0f : a.weight_decay;
  const float one_m_b1 = 1.0f - a.beta1, one_m_b2 = 1.0f - a.beta2;
  for (int64_t e = 0; e < n; ++e) {
    const float wd = w[e] * decay;
    const float ge = l2 != 0.0f ? g[e] + l2 * wd : g[e];
    const float me = a.beta1 * m[e] + one_m_b1 * ge;
    const float ve = a.beta2 * v[e] + one_m_b2 * (ge * ge);
    m[e] = me;
    v[e] = ve;
    const float denom = std::sqrt(ve) / s.bias2_sqrt + a.eps;
    w[e] = wd - s.step_size * (me / denom);
  }
}

}  // namespace

void adam_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width, kBlock);
  if (r.size() <= 0) return;
  update(buf[0] + r.begin, buf[1] + r.begin, buf[2] + r.begin, buf[3] + r.begin, adam_decode(call),
         read_hyper(call, buf), r.size());
}

void adam_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const AdamAttrs a = adam_decode(call);
  const Step s = read_hyper(call, buf);
  const double b1 = a.beta1, b2 = a.beta2, wdecay = a.weight_decay;
  const Range r = split_range(numel(call, 0), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    double w = buf[0][e];
    if (a.decoupled) w *= 1.0 - static_cast<double>(s.lr) * wdecay;
    // No L2 term at all when the decay is 0, as the fast kernel and PyTorch (0 * a NaN weight is NaN: the
    // moments would turn NaN where PyTorch's stay finite).
    const double g = a.decoupled || wdecay == 0.0 ? buf[3][e] : buf[3][e] + wdecay * w;
    const double m = b1 * buf[1][e] + (1.0 - b1) * g;
    const double v = b2 * buf[2][e] + (1.0 - b2) * g * g;
    buf[1][e] = static_cast<float>(m);
    buf[2][e] = static_cast<float>(v);
    buf[0][e] = static_cast<float>(w - static_cast<double>(s.step_size) * m /
                                           (std::sqrt(v) / static_cast<double>(s.bias2_sqrt) + a.eps));
  }
}

}  // namespace corun::codelets
