// small_gemm: the LSTM's per-step GEMM shapes on one core under OpenBLAS, oneDNN's dnnl_sgemm and libxsmm's
// JIT kernels (libxsmm_smmdispatch), the measurement behind the matmul backend choice (issue 18 item 2) and
// the input-projection pass's cost model (include/corun/input_projection.hpp: rate(M) = peak M / (M + half)).
//
//   small_gemm [--quick] [--trans-b] [--shapes M,K,N;...]
//
// Default shapes: batch 10 and 64 by hidden 256 / 512 / 1024, the per-step products [B, H] x [H, 4H] and
// [B, 2H] x [2H, 4H] (the concat form), and the stacked input projection [T B, H] x [H, 4H] (T = 20, 30).
// Prints one JSON line per shape: GF/s (median of the repeats after one untimed call) per backend, and the
// largest relative difference of each backend's C from OpenBLAS's. Row-major C = A B, no transposes. One
// thread everywhere (corun's kernels run one BLAS thread per team member).
// --trans-b: C = A B^T with B stored [N, K], the serving runtime's per-step products (weights in PyTorch's
// layout): OpenBLAS and oneDNN read B transposed, libxsmm runs on a copy of B^T made once, as
// serve/kernels/step_gemm.cpp packs it.
#include <cblas.h>

#ifdef CORUN_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif
#ifdef CORUN_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

extern "C" void openblas_set_num_threads(int);
#ifdef CORUN_HAVE_DNNL
extern "C" void omp_set_num_threads(int);  // libgomp: oneDNN's threads in Debian's build
#endif

namespace {

struct ShapeMKN {
  int m, k, n;
};

double median_gflops(const ShapeMKN& s, int repeats, const std::function<void()>& gemm) {
  gemm();  // untimed: JIT, buffers, pages
  const double flops = 2.0 * s.m * static_cast<double>(s.k) * s.n;
  // Enough calls per sample that a sample lasts ~2 ms: per-call timer overhead would swamp a 10-row GEMM.
  const int calls = std::max(1, static_cast<int>(2e-3 * 50e9 / flops));
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) gemm();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(flops * calls / sec * 1e-9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& ref) {
  double worst = 0.0, scale = 0.0;
  for (float v : ref) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - ref[i]));
  return scale > 0 ? worst / scale : worst;
}

std::vector<ShapeMKN> default_shapes(bool quick) {
  std::vector<ShapeMKN> out;
  const std::vector<int> hiddens = quick ? std::vector<int>{256} : std::vector<int>{256, 512, 1024};
  for (int h : hiddens)
    for (int b : {10, 64}) {
      out.push_back({b, h, 4 * h});
      out.push_back({b, 2 * h, 4 * h});
      for (int t : quick ? std::vector<int>{20} : std::vector<int>{20, 30}) out.push_back({t * b, h, 4 * h});
    }
  return out;
}

std::vector<ShapeMKN> parse_shapes(const std::string& text) {
  std::vector<ShapeMKN> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find(';', pos), text.size());
    ShapeMKN s{};
    if (std::sscanf(text.substr(pos, end - pos).c_str(), "%d,%d,%d", &s.m, &s.k, &s.n) != 3 || s.m < 1 || s.k < 1 ||
        s.n < 1) {
      std::fprintf(stderr, "small_gemm: --shapes wants M,K,N;M,K,N;... with positive integers, got '%s'\n",
                   text.c_str());
      std::exit(2);
    }
    out.push_back(s);
    pos = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, trans_b = false;
  std::string shapes_text;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[a], "--trans-b") == 0) {
      trans_b = true;
    } else if (std::strcmp(argv[a], "--shapes") == 0 && a + 1 < argc) {
      shapes_text = argv[++a];
    } else {
      std::fprintf(stderr, "usage: small_gemm [--quick] [--trans-b] [--shapes M,K,N;...]\n");
      return 2;
    }
  }
  openblas_set_num_threads(1);
#ifdef CORUN_HAVE_DNNL
  // Until 2026-12-06 this was missing and dnnl_sgemm ran one OpenMP thread per core: its column of the
  // earlier tables is a 2-thread rate on the 2-core VM, not a one-thread one.
  omp_set_num_threads(1);
#endif
#ifdef CORUN_HAVE_LIBXSMM
  libxsmm_init();
#endif
  const int repeats = quick ? 3 : 9;
  const std::vector<ShapeMKN> shapes = shapes_text.empty() ? default_shapes(quick) : parse_shapes(shapes_text);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const ShapeMKN& s : shapes) {
    std::vector<float> a(static_cast<size_t>(s.m) * s.k), b(static_cast<size_t>(s.k) * s.n);
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
    // --trans-b: b is B^T [n, k] and bt its transpose [k, n] (libxsmm's operand); else bt is b itself.
    std::vector<float> bt = b;
    if (trans_b)
      for (int j = 0; j < s.n; ++j)
        for (int p = 0; p < s.k; ++p) bt[static_cast<size_t>(p) * s.n + j] = b[static_cast<size_t>(j) * s.k + p];
    const char tb = trans_b ? 'T' : 'N';
    const int ldb = trans_b ? s.k : s.n;
    std::vector<float> ref(static_cast<size_t>(s.m) * s.n), c(ref.size());
    std::printf("{\"m\": %d, \"k\": %d, \"n\": %d, \"trans_b\": %s", s.m, s.k, s.n, trans_b ? "true" : "false");
    const double blas = median_gflops(s, repeats, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k,
                  b.data(), ldb, 0.0f, ref.data(), s.n);
    });
    std::printf(", \"openblas_gflops\": %.1f", blas);
#ifdef CORUN_HAVE_DNNL
    const double dnnl = median_gflops(s, repeats, [&] {
      dnnl_sgemm('N', tb, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), ldb, 0.0f, c.data(), s.n);
    });
    std::printf(", \"onednn_gflops\": %.1f, \"onednn_rel_diff\": %.2g", dnnl, max_rel_diff(c, ref));
#endif
#ifdef CORUN_HAVE_LIBXSMM
    // Column-major kernels: C^T[n, m] = B^T[n, k] A^T[k, m], i.e. (m', n', k') = (n, m, k) on the row-major buffers.
    const float alpha = 1.0f, beta = 0.0f;
    const libxsmm_smmfunction kernel =
        libxsmm_smmdispatch(s.n, s.m, s.k, &s.n, &s.k, &s.n, &alpha, &beta, nullptr, nullptr);
    if (kernel != nullptr) {
      const double xsmm = median_gflops(s, repeats, [&] { kernel(bt.data(), a.data(), c.data()); });
      std::printf(", \"libxsmm_gflops\": %.1f, \"libxsmm_rel_diff\": %.2g", xsmm, max_rel_diff(c, ref));
    } else {
      std::printf(", \"libxsmm_gflops\": null");  // no JIT kernel for this shape (LIBXSMM_MAX_MNK)
    }
#endif
    std::printf("}\n");
    std::fflush(stdout);
  }
  return 0;
}
