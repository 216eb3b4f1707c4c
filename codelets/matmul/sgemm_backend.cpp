// sgemm_backend.hpp has the why; this file holds the rule and the two calls.
#include "codelets/matmul/sgemm_backend.hpp"

#include "base/check.hpp"
#include "codelets/matmul/openblas_core.hpp"
#include "codelets/onednn_runtime.hpp"

#include <atomic>
#include <cblas.h>

#ifdef CORUN_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace corun::codelets {
namespace {

std::atomic<GemmKernel> g_gemm_kernel{GemmKernel::auto_};

#ifdef CORUN_HAVE_DNNL
// oneDNN's sgemm kernels on this CPU: AVX-512 (avx512_core and above) is where they were measured faster.
bool onednn_avx512() {
  static const bool avx512 = dnnl_get_effective_cpu_isa() >= dnnl_cpu_isa_avx512_core;
  return avx512;
}

// OpenBLAS on kernels without AVX2 (a CPU it did not recognise, openblas_core.hpp) while oneDNN has AVX2 or
// better: oneDNN for every product.
bool openblas_outclassed() {
  static const bool outclassed =
      openblas_kernels_older_than_cpu() && dnnl_get_effective_cpu_isa() >= dnnl_cpu_isa_avx2;
  return outclassed;
}

const char* onednn_isa_name() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_mic: case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    default: return "avx512_core_amx or later";
  }
}
#endif

}  // namespace

void set_gemm_kernel(GemmKernel choice) { g_gemm_kernel.store(choice); }
GemmKernel gemm_kernel() { return g_gemm_kernel.load(); }

bool gemm_uses_onednn(bool trans_a, bool trans_b) {
#ifdef CORUN_HAVE_DNNL
  switch (gemm_kernel()) {
    case GemmKernel::openblas: return false;
    case GemmKernel::onednn: return true;
    case GemmKernel::auto_: break;
  }
  // auto, the rule bench/small_gemm measured on the tiles matmul_fast cuts (one thread, quiet 2-core Zen 5,
  // bench/results/gemm-kernels-*.md): on AVX-512 oneDNN was 1.4-2.3x faster than OpenBLAS's kernels for A*B
  // (forward products) and 1.2-1.6x for A^T*B (weight gradients), but 0.7-1.1x for A*B^T (input gradients,
  // the weight read transposed); with AVX2 kernels only the two were within noise of each other.
  // And when OpenBLAS runs kernels older than the CPU (openblas_outclassed: 0.3.21 on a Xeon it took for a
  // Prescott), oneDNN for every product: 2.6-5.4x faster on all eleven tiles, A*B^T included
  // (bench/results/gemm-kernels-20261206-053517-prescott.md).
  (void)trans_a;
  if (openblas_outclassed()) return true;
  return onednn_avx512() && !trans_b;
#else
  (void)trans_a, (void)trans_b;
  return false;
#endif
}

bool call_uses_onednn_gemm(const OpCall& call) {
  if (call.kind != OpKind::matmul && call.kind != OpKind::batch_matmul) return false;
  return gemm_uses_onednn(call.i[0] != 0, call.i[1] != 0);
}

std::string gemm_description() {
#ifdef CORUN_HAVE_DNNL
  const std::string onednn = onednn_version() + " (" + onednn_isa_name() + ")";
  const bool nn = gemm_uses_onednn(false, false), nt = gemm_uses_onednn(false, true);
  if (nn && nt && gemm_kernel() == GemmKernel::auto_)
    return onednn + " for every product (OpenBLAS runs its " + openblas_core_name() + " kernels, older than the CPU)";
  if (nn && nt) return onednn + " for every product";
  if (nn) return onednn + " for A*B and A^T*B, OpenBLAS for A*B^T";
  return std::string("OpenBLAS for every product (") + onednn + " in the build)";
#else
  return "OpenBLAS for every product (built without oneDNN)";
#endif
}

void sgemm_rowmajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef CORUN_HAVE_DNNL
  if (gemm_uses_onednn(trans_a, trans_b)) {
    onednn_one_thread();
    const dnnl_status_t s =
        dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
    if (s != dnnl_success)
      CORUN_ABORT("oneDNN sgemm failed with status " << static_cast<int>(s) << " on " << m << "x" << n << "x" << k
                  << " (CORUN_GEMM_KERNEL=openblas avoids oneDNN)");
    return;
  }
#endif
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

}  // namespace corun::codelets
