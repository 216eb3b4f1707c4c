// engine/blas.hpp — OpenBLAS facts, the one-thread pinning every worker relies on, and its scratch buffer
// provisioned on every worker at start-up.
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

/// "" or a warning that OpenBLAS runs pre-AVX2 kernels (`core`: its core name) on a CPU with AVX2 and FMA
/// (`avx2_fma`), naming the OPENBLAS_CORETYPE to set (SkylakeX with `avx512`, else Haswell). OpenBLAS
/// 0.3.21 falls back to such a core on CPUs it does not know: a KVM guest of an Intel Xeon of family 6, model
/// 207 ran as Prescott (SSE3), every GEMM several times slower than it could be. Also a note when a CPU with
/// AVX-512 runs a core without it (a Zen 5 ran as Haswell), naming OPENBLAS_CORETYPE=SkylakeX.
std::string core_warning(const std::string& core, bool avx2_fma, bool avx512);
/// core_warning() for this process's OpenBLAS and CPU.
std::string core_warning();

/// Bytes of address space OpenBLAS maps for one thread's scratch buffer at its first call (its compile-time
/// BUFFER_SIZE of 128 MiB, measured on 0.3.21, plus alignment).
inline constexpr double kBufferBytes = 130.0 * 1024 * 1024;

/// Provisions OpenBLAS's scratch buffers at start-up. OpenBLAS retries a failed buffer mmap forever at 100%
/// CPU (the spin `ulimit -v` used to cause in the middle of a run), so first the address-space limit is
/// compared with what the buffers of all CPU workers need: too little is corun::Error(invalid_config) naming
/// `ulimit -v` and the size to ask for (StarPU is shut down first). Then, with `touch_on_workers`, every
/// worker takes its buffer now with one tiny sgemm, and a provisioning that does not finish within seconds
/// ends the process with exit 1 and that message. corun's own policies pass false: StarPU hands them the
/// post-execution hooks of tasks pinned to a worker, which they never pushed (the stress test hangs). Call
/// right after starpu_init.
void provision_worker_buffers(bool touch_on_workers);

/// The same address-space check before starpu_init, for the worker count about to be asked for: under a low
/// `ulimit -v` StarPU itself aborts while creating its worker threads (a backtrace, not corun's message), so
/// a limit that cannot hold the buffers is refused before StarPU starts. Throws corun::Error(invalid_config).
void check_address_space(unsigned workers);

}  // namespace corun::blas
