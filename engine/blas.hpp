// engine/blas.hpp — OpenBLAS facts and the one-thread pinning every worker relies on.
#pragma once

#include <string>

namespace corun::blas {

/// OpenBLAS runs one thread per call: parallelism comes from StarPU teams, never from nested BLAS threads.
void pin_single_thread();
/// openblas_get_config(), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64".
std::string config_string();
/// The kernel family OpenBLAS selected at load time (honours OPENBLAS_CORETYPE).
std::string core_name();
int threads();

}  // namespace corun::blas
