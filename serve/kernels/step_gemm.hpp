// serve/kernels/step_gemm.hpp — the product of one step of one member's block, C[m, n] += A[m, k] W[n, k]^T,
// with W fixed for the executor's life, so its kernel and its packed weights are chosen once.
//
// Why not just cblas_sgemm: these products have as many rows as the member's share of the batch (10 at
// batch 10) and OpenBLAS's sgemm ran them at half of one core's rate: 48-55 GF/s for [10, 256] x [256, 512]
// where libxsmm's JIT kernel for exactly that shape ran 112-117 and OpenBLAS's own large GEMMs reach ~105
// (2-core Zen 4 VM with AVX-512, 2026-12-07, `bench/small_gemm --trans-b`; 3 to 64 rows by 256-1024 by
// 512-2048: libxsmm 98-117 GF/s, OpenBLAS 18-93). libxsmm wants W as [k, n] (it is column-major:
// C^T = W A^T), so the weights are transposed once here. It loses where the weights outgrow the caches
// (64 x 1024 x 4096: 32-42 GF/s against OpenBLAS's 66-69), at two rows (71 against 97-105) and at one,
// where OpenBLAS runs a GEMV; those stay on OpenBLAS (prefer_step_gemm). Whichever runs, the serving plan search times
// both side by side and keeps the faster in the plan (Plan::step_gemm).
#pragma once

#include <corun/serve.hpp>

#include <cstdint>
#include <vector>

namespace corun::serve {

/// Whether the build has libxsmm (libxsmm-dev; cmake/deps.cmake).
bool have_libxsmm();

/// The kernel the analytical rule picks for C[m, n] += A[m, k] W^T when nothing was measured: libxsmm for
/// 3 to 64 rows with at most 1 Mi weights (4 MiB), OpenBLAS otherwise or without libxsmm.
StepGemmKernel prefer_step_gemm(int m, int n, int k);

class StepGemm {
 public:
  StepGemm() = default;
  /// C[m, n] += A[m, k] W[n, k]^T for W row-major with leading dimension ldw (copied), A with lda, C with
  /// ldc. `want` libxsmm where it cannot run (no libxsmm, one row, a shape its JIT refuses) runs OpenBLAS.
  StepGemm(StepGemmKernel want, int m, int n, int k, const float* w, int ldw, int lda, int ldc);

  void run(const float* a, float* c) const;
  StepGemmKernel kernel() const { return kernel_; }

 private:
  StepGemmKernel kernel_ = StepGemmKernel::openblas;
  int m_ = 0, n_ = 0, k_ = 0, lda_ = 0, ldc_ = 0;
  std::vector<float> w_;  // OpenBLAS: [n, k]; libxsmm: [k, n]
  using Jit = void (*)(const float* a, const float* b, float* c, ...);  // libxsmm_smmfunction
  Jit jit_ = nullptr;     // owned by libxsmm's code registry
};

}  // namespace corun::serve
