#include "serve/kernels/cells.hpp"

#include "serve/kernels/activations.hpp"

#include <cblas.h>

namespace corun::serve {

void gemm_acc_nt(int m, int n, int k, const float* a, int lda, const float* w, int ldw, float* c, int ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  if (m == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w, ldw, a, 1, 1.0f, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, lda, w, ldw, 1.0f, c, ldc);
}

void lstm_cell_block(int rows, int hn, float* gates, int ldg, const int* slot, float* c, bool first, float* h,
                     int ldh, float* tmp) {
  for (int r = 0; r < rows; ++r) {
    float* g = gates + static_cast<int64_t>(r) * ldg;
    float* gi = g + slot[0] * hn;
    float* gf = g + slot[1] * hn;
    float* gg = g + slot[2] * hn;
    float* go = g + slot[3] * hn;
    sigmoid_inplace(gi, hn);
    sigmoid_inplace(gf, hn);
    tanh_inplace(gg, hn);
    sigmoid_inplace(go, hn);
    float* cr = c + static_cast<int64_t>(r) * hn;
    if (first) {
      for (int u = 0; u < hn; ++u) cr[u] = gi[u] * gg[u];
    } else {
      for (int u = 0; u < hn; ++u) cr[u] = gf[u] * cr[u] + gi[u] * gg[u];
    }
    tanh_copy(cr, tmp, hn);
    float* hr = h + static_cast<int64_t>(r) * ldh;
    for (int u = 0; u < hn; ++u) hr[u] = go[u] * tmp[u];
  }
}

void gru_cell_block(int rows, int hn, float* xg, int ldx, float* hg, int ldhg, const int* slot, const float* h_prev,
                    float* h, int ldh) {
  for (int r = 0; r < rows; ++r) {
    float* x = xg + static_cast<int64_t>(r) * ldx;
    float* hh = hg + static_cast<int64_t>(r) * ldhg;
    float* xr = x + slot[0] * hn;
    float* xz = x + slot[1] * hn;
    float* xn = x + slot[2] * hn;
    const float* hr = hh + slot[0] * hn;
    const float* hz = hh + slot[1] * hn;
    const float* hnn = hh + slot[2] * hn;
    for (int u = 0; u < hn; ++u) {
      xr[u] += hr[u];
      xz[u] += hz[u];
    }
    sigmoid_inplace(xr, hn);
    sigmoid_inplace(xz, hn);
    for (int u = 0; u < hn; ++u) xn[u] += xr[u] * hnn[u];
    tanh_inplace(xn, hn);
    float* out = h + static_cast<int64_t>(r) * ldh;
    if (h_prev == nullptr) {
      for (int u = 0; u < hn; ++u) out[u] = (1.0f - xz[u]) * xn[u];
    } else {
      const float* hp = h_prev + static_cast<int64_t>(r) * ldh;
      for (int u = 0; u < hn; ++u) out[u] = (1.0f - xz[u]) * xn[u] + xz[u] * hp[u];
    }
  }
}

}  // namespace corun::serve
