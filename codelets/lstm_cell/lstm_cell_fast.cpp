// Fast LSTM cell: per row of this member's slice, a few loops over the H units of each gate block. Every
// step is the same float operation, in the same order, as the unfused graph's kernels (split, sigmoid,
// tanh, mul, add and their gradients; formulas in codelets/elementwise.hpp), so fused and unfused LSTMs
// agree to the last bit with the fast kernels.
#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"
#include "codelets/simd_clones.hpp"
#include "codelets/lstm_cell/lstm_cell.hpp"

namespace corun::codelets {
namespace {

// GCC -O2 (the "very cheap" vectoriser) only vectorises loops with a known trip count: every loop runs
// 16-wide blocks plus a scalar tail (ew::map1 / ew::map2, the unfused ops' own loops, where one or two inputs
// do). ew::sigmoid_fast and ew::tanh_fast are branch-free float code (no libm call), so the gate loops
// vectorise too.
using ew::kBlock;

// c = f*cp + i*g over n units (three inputs: no ew:: loop takes them).
void state_units(const float* __restrict i, const float* __restrict f, const float* __restrict g,
                 const float* __restrict cp, float* __restrict c, int64_t n) {
  int64_t u = 0;
  for (; u + kBlock <= n; u += kBlock)
    for (int j = 0; j < kBlock; ++j) c[u + j] = f[u + j] * cp[u + j] + i[u + j] * g[u + j];
  for (; u < n; ++u) c[u] = f[u] * cp[u] + i[u] * g[u];
}

// Forward of one row: z [4H] -> a [4H], c, h, tc [H].
void cell_row(const float* z, const float* cp, float* c, float* h, float* a, float* tc, int64_t H) {
  const auto sigmoid = [](float x) { return ew::sigmoid_fast(x); };
  const auto tanh = [](float x) { return ew::tanh_fast(x); };
  ew::map1(sigmoid, z, a, 2 * H);  // i and f
  ew::map1(tanh, z + 2 * H, a + 2 * H, H);
  ew::map1(sigmoid, z + 3 * H, a + 3 * H, H);
  state_units(a, a + H, a + 2 * H, cp, c, H);
  ew::map1(tanh, c, tc, H);
  ew::map2([](float o, float t) { return ew::mul_fast(o, t); }, a + 3 * H, tc, h, H);
}

// Backward of units [0, n) of one row, each gate block its own restrict parameter; kN > 0 fixes n at compile
// time (whole blocks, which vectorise), kN = 0 takes the tail's n. dc = dC + tanh_grad(TC, dH * o) is how
// the unfused graph sums c's two gradient paths: the same products, rounded in the same order.
template <int kN>
void cell_grad_units(const float* __restrict i, const float* __restrict f, const float* __restrict g,
                     const float* __restrict o, const float* __restrict cp, const float* __restrict tc,
                     const float* __restrict dh, const float* __restrict dcn, float* __restrict dzi,
                     float* __restrict dzf, float* __restrict dzg, float* __restrict dzo, float* __restrict dcp,
                     int64_t n) {
  const int64_t count = kN > 0 ? kN : n;
  for (int64_t u = 0; u < count; ++u) {
    const float dc = dcn[u] + ew::tanh_grad_fast(tc[u], dh[u] * o[u]);
    dzi[u] = ew::sigmoid_grad_fast(i[u], dc * g[u]);
    dzf[u] = ew::sigmoid_grad_fast(f[u], dc * cp[u]);
    dzg[u] = ew::tanh_grad_fast(g[u], dc * i[u]);
    dzo[u] = ew::sigmoid_grad_fast(o[u], dh[u] * tc[u]);
    dcp[u] = dc * f[u];
  }
}

void cell_grad_row(const float* a, const float* cp, const float* tc, const float* dh, const float* dcn, float* dz,
                   float* dcp, int64_t H) {
  int64_t u = 0;
  for (; u + kBlock <= H; u += kBlock)
    cell_grad_units<kBlock>(a + u, a + H + u, a + 2 * H + u, a + 3 * H + u, cp + u, tc + u, dh + u, dcn + u, dz + u,
                            dz + H + u, dz + 2 * H + u, dz + 3 * H + u, dcp + u, kBlock);
  cell_grad_units<0>(a + u, a + H + u, a + 2 * H + u, a + 3 * H + u, cp + u, tc + u, dh + u, dcn + u, dz + u,
                     dz + H + u, dz + 2 * H + u, dz + 3 * H + u, dcp + u, H - u);
}

}  // namespace

CORUN_SIMD_CLONES void lstm_cell_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t H = call.shapes[1][1];
  const Range r = split_range(call.shapes[1][0], rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    cell_row(buf[0] + b * 4 * H, buf[1] + b * H, buf[2] + b * H, buf[3] + b * H, buf[4] + b * 4 * H, buf[5] + b * H, H);
}

CORUN_SIMD_CLONES void lstm_cell_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t H = call.shapes[1][1];
  const Range r = split_range(call.shapes[1][0], rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    cell_grad_row(buf[0] + b * 4 * H, buf[1] + b * H, buf[2] + b * H, buf[3] + b * H, buf[4] + b * H,
                  buf[5] + b * 4 * H, buf[6] + b * H, H);
}

}  // namespace corun::codelets
