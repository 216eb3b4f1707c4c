#include "engine/blas.hpp"

#include "base/check.hpp"
#include "base/memory_budget.hpp"
#include "codelets/matmul/openblas_core.hpp"

#include <cblas.h>
#include <starpu.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace corun::blas {

void pin_single_thread() {
  openblas_set_num_threads(1);
}
std::string config_string() {
  return openblas_get_config();
}
std::string core_name() {
  return codelets::openblas_core_name();
}
int threads() {
  return openblas_get_num_threads();
}

std::string core_warning(const std::string& core, bool avx2_fma, bool avx512) {
  if (avx2_fma && codelets::openblas_core_lacks_avx2(core))
    return "OpenBLAS runs its " + core + " kernels (no AVX2) on a CPU with AVX2" + (avx512 ? " and AVX-512" : "") +
           ": it did not recognise this CPU, and every GEMM runs several times slower than it could; set "
           "OPENBLAS_CORETYPE=" + (avx512 ? "SkylakeX" : "Haswell");
  // A newer CPU than the library (a Zen 4 or 5 ran as Haswell with 0.3.21): the products oneDNN takes
  // (gemm_impls.cpp: A*B and A^T*B on AVX-512) do not care, but A*B^T and the serving kernels run AVX2.
  if (avx512 && !codelets::openblas_core_has_avx512(core))
    return "OpenBLAS runs its " + core + " kernels (AVX2) on a CPU with AVX-512: the products it computes (A*B^T, "
           "the serving kernels) may run faster with OPENBLAS_CORETYPE=SkylakeX (compare with bench/gemm_kernels.sh)";
  return "";
}

std::string core_warning() {
  const codelets::CpuVectorIsa isa = codelets::cpu_vector_isa();
  return core_warning(core_name(), isa.avx2_fma, isa.avx512);
}

namespace {

// Long enough for a loaded machine to run one 8x8 sgemm per worker; short enough that a batch job stuck on
// an allocation fails within seconds instead of burning its allocation.
constexpr int kProvisionSeconds = 20;

void touch_buffer(void*) {
  float a[64] = {}, b[64] = {}, c[64] = {};
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 1.0f, a, 8, b, 8, 0.0f, c, 8);
}

std::string limit_hint(unsigned workers) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "OpenBLAS needs a %.0f MiB scratch buffer per worker (%u workers); raise the "
                "limit (ulimit -v) or run fewer workers (STARPU_NCPU)",
                kBufferBytes / (1024 * 1024), workers);
  return buf;
}

}  // namespace

static bool address_space_fits(unsigned workers, std::string* why) {
  const double left = address_space_left();
  const double needed = workers * kBufferBytes;
  if (left < 0 || left >= needed) return true;
  *why = "the address-space limit (ulimit -v) leaves " + human_bytes(left) + ", less than the " +
         human_bytes(needed) + " the BLAS buffers need: " + limit_hint(workers);
  return false;
}

void check_address_space(unsigned workers) {
  std::string why;
  if (!address_space_fits(workers, &why)) detail::fail(Status::invalid_config, why);
}

void provision_worker_buffers(bool touch_on_workers) {
  const unsigned workers = starpu_cpu_worker_get_count();
  std::string why;
  if (!address_space_fits(workers, &why)) {
    starpu_shutdown();
    detail::fail(Status::invalid_config, why);
  }
  if (!touch_on_workers) return;
  // The watchdog: OpenBLAS does not return from a failed allocation, so only a timer can end the wait.
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(m);
    if (cv.wait_for(lock, std::chrono::seconds(kProvisionSeconds), [&] { return done; })) return;
    const std::string msg = "corun: error: the BLAS buffers could not be allocated within " +
                            std::to_string(kProvisionSeconds) +
                            " s (out of memory or address space): " + limit_hint(workers) + "\n";
    const ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    ::_exit(1);
  });
  starpu_execute_on_each_worker(touch_buffer, nullptr, STARPU_CPU);
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
}

}  // namespace corun::blas
