// The single-threaded row-major sgemm under the matmul and batch_matmul kernels, on the library of the list's
// entry that runs the call (gemm_impls.hpp: OpenBLAS or oneDNN's sgemm, chosen per node by the plan step).
#pragma once

#include "codelets/matmul/gemm_impls.hpp"

#include <cstdint>

namespace corun::codelets {

/// C[m, n] = op(A) op(B) + beta C, row-major, one thread, by `impl`'s library (gemm_impl_of(call) of the
/// product's call). GemmImpl::onednn in a build without oneDNN runs OpenBLAS (the list never chooses it there).
void sgemm_rowmajor(GemmImpl impl, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace corun::codelets
