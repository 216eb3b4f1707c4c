// Fast LSTM cell: per row of this member's slice, a few loops over the H units of each gate block. Every
// step is the same float operation, in the same order, as the unfused graph's kernels (split, sigmoid,
// tanh, mul, add and their gradients; formulas in codelets/elementwise.hpp), so fused and unfused LSTMs
// agree to the last bit with the fast kernels.
#include "codelets/elementwise.hpp"
#include "codelets/lstm_cell/lstm_cell.hpp"

namespace corun::codelets {
namespace {

// GCC -O2 (the "very cheap" vectoriser) only vectorises loops with a known trip count: the pure
// arithmetic loops run 16-wide blocks plus a scalar tail. The loops calling exp/tanh stay scalar.
constexpr int kBlock = 16;

// Forward of one row: z [4H] -> a [4H], c, h, tc [H].
void cell_row(const float* __restrict z, const float* __restrict cp, float* __restrict c, float* __restrict h,
              float* __restrict a, float* __restrict tc, int64_t H) {
  for (int64_t u = 0; u < 2 * H; ++u) a[u] = ew::sigmoid_fast(z[u]);  // i and f
  for (int64_t u = 2 * H; u < 3 * H; ++u) a[u] = ew::tanh_fast(z[u]);
  for (int64_t u = 3 * H; u < 4 * H; ++u) a[u] = ew::sigmoid_fast(z[u]);
  const float* i = a;
  const float* f = a + H;
  const float* g = a + 2 * H;
  const float* o = a + 3 * H;
  int64_t u = 0;
  for (; u + kBlock <= H; u += kBlock)
    for (int j = 0; j < kBlock; ++j) c[u + j] = f[u + j] * cp[u + j] + i[u + j] * g[u + j];
  for (; u < H; ++u) c[u] = f[u] * cp[u] + i[u] * g[u];
  for (u = 0; u < H; ++u) {
    tc[u] = ew::tanh_fast(c[u]);
    h[u] = o[u] * tc[u];
  }
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

void lstm_cell_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t H = call.shapes[1][1];
  const Range r = split_range(call.shapes[1][0], rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    cell_row(buf[0] + b * 4 * H, buf[1] + b * H, buf[2] + b * H, buf[3] + b * H, buf[4] + b * 4 * H, buf[5] + b * H, H);
}

void lstm_cell_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t H = call.shapes[1][1];
  const Range r = split_range(call.shapes[1][0], rank, width);
  for (int64_t b = r.begin; b < r.end; ++b)
    cell_grad_row(buf[0] + b * 4 * H, buf[1] + b * H, buf[2] + b * H, buf[3] + b * H, buf[4] + b * H,
                  buf[5] + b * 4 * H, buf[6] + b * H, H);
}

}  // namespace corun::codelets
