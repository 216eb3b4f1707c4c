// step_gemm.hpp has the why and the measurements.
#include "serve/kernels/step_gemm.hpp"

#include "serve/kernels/cells.hpp"

#ifdef CORUN_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace corun::serve {

bool have_libxsmm() {
#ifdef CORUN_HAVE_LIBXSMM
  return true;
#else
  return false;
#endif
}

StepGemmKernel prefer_step_gemm(int m, int n, int k) {
  const int64_t weights = static_cast<int64_t>(n) * k;
  if (have_libxsmm() && m >= 3 && m <= 64 && weights <= (int64_t{1} << 20)) return StepGemmKernel::libxsmm;
  return StepGemmKernel::openblas;
}

StepGemm::StepGemm(StepGemmKernel want, int m, int n, int k, const float* w, int ldw, int lda, int ldc)
    : m_(m), n_(n), k_(k), lda_(lda), ldc_(ldc) {
#ifdef CORUN_HAVE_LIBXSMM
  if (want == StepGemmKernel::libxsmm && m >= 2 && n >= 1 && k >= 1) {
    // Column-major view of the row-major product: C^T[n, m] = W[n, k] A^T[k, m], i.e. libxsmm's M = n, N = m, K = k,
    // its A the transposed weights [k, n] (leading dimension n), its B our A (lda), its C ours (ldc).
    const libxsmm_blasint mm = n, nn = m, kk = k, la = n, lb = lda, lc = ldc;
    const float alpha = 1.0f, beta = 1.0f;
    const libxsmm_smmfunction f = libxsmm_smmdispatch(mm, nn, kk, &la, &lb, &lc, &alpha, &beta, nullptr, nullptr);
    if (f != nullptr) {
      w_.resize(static_cast<size_t>(n) * k);
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p) w_[static_cast<size_t>(p) * n + j] = w[static_cast<int64_t>(j) * ldw + p];
      jit_ = f;
      kernel_ = StepGemmKernel::libxsmm;
      return;
    }
  }
#else
  (void)want;
#endif
  w_.resize(static_cast<size_t>(n) * k);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k; ++p) w_[static_cast<size_t>(j) * k + p] = w[static_cast<int64_t>(j) * ldw + p];
}

void StepGemm::run(const float* a, float* c) const {
  if (m_ == 0 || n_ == 0 || k_ == 0) return;
#ifdef CORUN_HAVE_LIBXSMM
  if (kernel_ == StepGemmKernel::libxsmm) {
    jit_(w_.data(), a, c);
    return;
  }
#endif
  gemm_acc_nt(m_, n_, k_, a, lda_, w_.data(), k_, c, ldc_);
}

}  // namespace corun::serve
