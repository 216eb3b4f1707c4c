// Which kernels OpenBLAS runs, against what this CPU offers. OpenBLAS 0.3.21 (Debian 12) picks its kernel
// family at load time (DYNAMIC_ARCH) and falls back to an SSE3 core, Prescott, on CPUs it does not know: a
// KVM guest of an Intel Xeon of family 6, model 207 (AVX-512) ran every GEMM on Prescott kernels, several
// times slower than it could. `corun info` warns about it (engine/blas.cpp); the products' `auto` rule
// (gemm_impls.cpp) then runs oneDNN instead.
#pragma once

#include <string>

namespace corun::codelets {

/// openblas_get_corename(): the kernel family OpenBLAS selected (honours OPENBLAS_CORETYPE).
std::string openblas_core_name();

/// Whether `core` (openblas_get_corename's spelling) is one of OpenBLAS's families without AVX2 kernels.
bool openblas_core_lacks_avx2(const std::string& core);
/// Whether OpenBLAS's core `core` has AVX-512 kernels (SkylakeX, Cooperlake, SapphireRapids).
bool openblas_core_has_avx512(const std::string& core);

struct CpuVectorIsa {
  bool avx2_fma = false;
  bool avx512 = false;  ///< AVX-512 F, BW, VL and DQ: what OpenBLAS's SkylakeX kernels need
};
/// This CPU's (cpuid).
CpuVectorIsa cpu_vector_isa();

/// This process's OpenBLAS runs kernels without AVX2 on a CPU with AVX2 and FMA.
bool openblas_kernels_older_than_cpu();

}  // namespace corun::codelets
