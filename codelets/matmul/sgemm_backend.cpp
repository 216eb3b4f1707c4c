// The two libraries' calls behind sgemm_rowmajor (sgemm_backend.hpp); which one runs is the list's choice
// (gemm_impls.hpp).
#include "codelets/matmul/sgemm_backend.hpp"

#include "base/check.hpp"
#include "codelets/onednn_runtime.hpp"

#include <cblas.h>

#ifdef CORUN_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace corun::codelets {

void sgemm_rowmajor(GemmImpl impl, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef CORUN_HAVE_DNNL
  if (impl == GemmImpl::onednn) {
    onednn_one_thread();
    const dnnl_status_t s =
        dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
    if (s != dnnl_success)
      CORUN_ABORT("oneDNN sgemm failed with status " << static_cast<int>(s) << " on " << m << "x" << n << "x" << k
                  << " (CORUN_GEMM_KERNEL=openblas avoids oneDNN)");
    return;
  }
#else
  (void)impl;
#endif
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

}  // namespace corun::codelets
