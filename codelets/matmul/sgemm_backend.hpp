// The single-threaded row-major sgemm under the matmul and batch_matmul kernels, from OpenBLAS or oneDNN
// (issue 18 item 2: the per-step GEMMs of an RNN ran at 50-80 GF/s under OpenBLAS's AVX2 kernels on an
// AVX-512 core where oneDNN's sgemm reached 100-160; bench/small_gemm and bench/results/gemm-kernels-*.md).
//
// The choice is process-wide (CORUN_GEMM_KERNEL, read by engine/config.cpp) and, under `auto`, a rule on the
// transposes and oneDNN's ISA alone: never the team width, the policy or a timing, so a tile of C is the same
// call, with the same bits, whoever runs it (matmul_fast.cpp's tiling argument). The two libraries give
// different bits (float rounding), as two CPUs do.
#pragma once

#include "codelets/op.hpp"

#include <cstdint>
#include <string>

namespace corun::codelets {

enum class GemmKernel { auto_, onednn, openblas };

/// Sets the process-wide choice (before any task runs). `onednn` without oneDNN in the build runs OpenBLAS.
void set_gemm_kernel(GemmKernel choice);
GemmKernel gemm_kernel();

/// Which library runs a product with these transposes under the current choice.
bool gemm_uses_onednn(bool trans_a, bool trans_b);

/// Whether `call` is a matmul or batch_matmul whose fast kernel runs oneDNN: its perfmodel footprint then
/// differs from the OpenBLAS one, so the per-width models keep the two libraries' timings apart.
bool call_uses_onednn_gemm(const OpCall& call);

/// "oneDNN 2.6.3 (avx512_core) for A*B and A^T*B, OpenBLAS for A*B^T": for `corun info` and the benchmark tables.
std::string gemm_description();

/// C[m, n] = op(A) op(B) + beta C, row-major, one thread, by the library gemm_uses_onednn names.
void sgemm_rowmajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace corun::codelets
