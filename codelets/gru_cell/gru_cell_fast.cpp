// Fast GRU cell: per row of this member's slice, loops GCC vectorises (fixed 16-wide blocks plus a scalar
// tail: ew::map2 where two inputs do, as lstm_cell_fast; ew::sigmoid_fast and ew::tanh_fast are branch-free
// float code).
// Formulas from codelets/elementwise.hpp, so the cell agrees closely with the same graph built from
// sigmoid, tanh, mul and add nodes.
#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"
#include "codelets/simd_clones.hpp"
#include "codelets/gru_cell/gru_cell.hpp"

namespace corun::codelets {
namespace {

using ew::kBlock;

// The candidate and the new state over n units: nn = tanh(xpn + r * hpn), h = (1 - z) * nn + z * hprev.
void state_units(const float* __restrict xpn, const float* __restrict hpn, const float* __restrict z,
                 const float* __restrict r, const float* __restrict hprev, float* __restrict nn,
                 float* __restrict h, int64_t n) {
  int64_t u = 0;
  for (; u + kBlock <= n; u += kBlock)
    for (int j = 0; j < kBlock; ++j) nn[u + j] = ew::tanh_fast(xpn[u + j] + r[u + j] * hpn[u + j]);
  for (; u < n; ++u) nn[u] = ew::tanh_fast(xpn[u] + r[u] * hpn[u]);
  for (u = 0; u + kBlock <= n; u += kBlock)
    for (int j = 0; j < kBlock; ++j) h[u + j] = (1.0f - z[u + j]) * nn[u + j] + z[u + j] * hprev[u + j];
  for (; u < n; ++u) h[u] = (1.0f - z[u]) * nn[u] + z[u] * hprev[u];
}

// Forward of one row: xp, hp [3H], hprev [H] -> h [H], a [3H] = (z, r, n).
void cell_row(const float* xp, const float* hp, const float* hprev, float* h, float* a, int64_t H) {
  ew::map2([](float x, float r) { return ew::sigmoid_fast(x + r); }, xp, hp, a, 2 * H);  // z and r
  state_units(xp + 2 * H, hp + 2 * H, a, a + H, hprev, a + 2 * H, h, H);
}

// Backward of units [0, n) of one row; kN > 0 fixes the count at compile time (whole blocks vectorise).
template <int kN>
void cell_grad_units(const float* __restrict z, const float* __restrict r, const float* __restrict n,
                     const float* __restrict hpn, const float* __restrict hprev, const float* __restrict dh,
                     float* __restrict dxz, float* __restrict dxr, float* __restrict dxn, float* __restrict dhz,
                     float* __restrict dhr, float* __restrict dhn, float* __restrict dhprev, int64_t count_in) {
  const int64_t count = kN > 0 ? kN : count_in;
  for (int64_t u = 0; u < count; ++u) {
    const float dn = ew::tanh_grad_fast(n[u], dh[u] * (1.0f - z[u]));
    const float dz = ew::sigmoid_grad_fast(z[u], dh[u] * (hprev[u] - n[u]));
    const float dr = ew::sigmoid_grad_fast(r[u], dn * hpn[u]);
    dxz[u] = dz, dhz[u] = dz;
    dxr[u] = dr, dhr[u] = dr;
    dxn[u] = dn, dhn[u] = dn * r[u];
    dhprev[u] = dh[u] * z[u];
  }
}

void cell_grad_row(const float* a, const float* hp, const float* hprev, const float* dh, float* dxp, float* dhp,
                   float* dhprev, int64_t H) {
  int64_t u = 0;
  for (; u + kBlock <= H; u += kBlock)
    cell_grad_units<kBlock>(a + u, a + H + u, a + 2 * H + u, hp + 2 * H + u, hprev + u, dh + u, dxp + u,
                            dxp + H + u, dxp + 2 * H + u, dhp + u, dhp + H + u, dhp + 2 * H + u, dhprev + u, kBlock);
  cell_grad_units<0>(a + u, a + H + u, a + 2 * H + u, hp + 2 * H + u, hprev + u, dh + u, dxp + u, dxp + H + u,
                     dxp + 2 * H + u, dhp + u, dhp + H + u, dhp + 2 * H + u, dhprev + u, H - u);
}

}  // namespace

CORUN_SIMD_CLONES void gru_cell_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t H = call.shapes[2][1];
  const Range r = split_range(call.shapes[2][0], rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    cell_row(buf[0] + b * 3 * H, buf[1] + b * 3 * H, buf[2] + b * H, buf[3] + b * H, buf[4] + b * 3 * H, H);
}

CORUN_SIMD_CLONES void gru_cell_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t H = call.shapes[2][1];
  const Range r = split_range(call.shapes[2][0], rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    cell_grad_row(buf[0] + b * 3 * H, buf[1] + b * 3 * H, buf[2] + b * H, buf[3] + b * H, buf[4] + b * 3 * H,
                  buf[5] + b * 3 * H, buf[6] + b * H, H);
}

}  // namespace corun::codelets
