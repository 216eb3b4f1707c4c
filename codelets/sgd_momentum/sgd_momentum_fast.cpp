// Fast sgd_momentum: one restrict-qualified loop over this member's 16-aligned block (see sgd_fast.cpp for
// why the fixed 16-wide inner loop).
#include "codelets/sgd_momentum/sgd_momentum.hpp"

namespace corun::codelets {
namespace {

constexpr int kBlock = 16;

void update(float* __restrict w, float* __restrict v, const float* __restrict g, float lr, float mu, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) {
      v[e + j] = mu * v[e + j] + g[e + j];
      w[e + j] -= lr * v[e + j];
    }
  for (; e < n; ++e) {
    v[e] = mu * v[e] + g[e];
    w[e] -= lr * v[e];
  }
}

}  // namespace

void sgd_momentum_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 0), rank, width, kBlock);
  if (r.size() <= 0) return;
  update(buf[0] + r.begin, buf[1] + r.begin, buf[2] + r.begin, call.f, sgd_momentum_mu(call), r.size());
}

}  // namespace corun::codelets
