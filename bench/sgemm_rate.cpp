// sgemm_rate: OpenBLAS's single-precision GEMM rate on this machine, the yardstick of bench/vs_pytorch.sh
// ("LSTM medium >= 80% of the measured 2-core sgemm rate", issue 18).
//
//   sgemm_rate [N [THREADS [REPEATS]]]     N x N x N, default 2048, 1 thread, 10 repeats
//
// Prints one JSON line: n, threads, the median GF/s over the repeats (after one untimed call) and the best.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" void openblas_set_num_threads(int);

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 10;
  if (n < 1 || threads < 1 || repeats < 1) {
    std::fprintf(stderr, "usage: sgemm_rate [N [THREADS [REPEATS]]] (positive integers)\n");
    return 2;
  }
  openblas_set_num_threads(threads);
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<float> a(count, 0.5f), b(count, 0.25f), c(count, 0.0f);
  auto gemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  gemm();  // untimed: OpenBLAS's buffers and the pages of c
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(2.0 * n * static_cast<double>(n) * n / s * 1e-9);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("{\"n\": %d, \"threads\": %d, \"gflops_median\": %.1f, \"gflops_best\": %.1f}\n", n, threads,
              rates[rates.size() / 2], rates.back());
  return 0;
}
