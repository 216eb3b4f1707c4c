// gemm_kernels: corun's matmul fast kernel (codelets/matmul/matmul_fast.cpp: fixed tiles of C, one
// single-threaded sgemm each) with its tiles on OpenBLAS and on oneDNN's sgemm (CORUN_GEMM_KERNEL's two
// libraries), one thread, interleaved: the measurement behind CORUN_GEMM_KERNEL=auto's rule
// (codelets/matmul/gemm_impls.cpp, docs/models.md "Products: OpenBLAS or oneDNN").
//
//   gemm_kernels [REPS]
//
// Prints a markdown table: per shape and transposes, GF/s of each library (median of REPS rounds, each a
// batch of calls lasting ~2 ms, the two libraries alternating round by round), their ratio, what `auto`
// picks on this CPU and the largest relative difference of the two results.
#include "codelets/matmul/matmul.hpp"
#include "codelets/matmul/gemm_impls.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace {

using namespace corun;
using namespace corun::codelets;

struct Product {
  const char* what;
  int64_t m, k, n;
  bool ta, tb, accumulate;
};

// The products of LSTM small / medium training (batch 64, hidden 128 / 512, concat form: K = 2 H), the
// stacked input projection, a CNN's fully connected layers and a serving batch of 10.
const Product kProducts[] = {
    {"LSTM small step, forward", 64, 256, 512, false, false, false},
    {"LSTM small step, dX", 64, 512, 256, false, true, false},
    {"LSTM small step, dW (accumulating)", 256, 64, 512, true, false, true},
    {"LSTM medium step, forward", 64, 1024, 2048, false, false, false},
    {"LSTM medium step, dX", 64, 2048, 1024, false, true, false},
    {"LSTM medium step, dW (accumulating)", 1024, 64, 2048, true, false, true},
    {"stacked input projection (T B = 1280)", 1280, 128, 512, false, false, false},
    {"fully connected, forward", 128, 3136, 64, false, false, false},
    {"fully connected, dX", 128, 64, 3136, false, true, false},
    {"fully connected, dW", 3136, 128, 64, true, false, false},
    {"serving batch 10, forward", 10, 512, 2048, false, false, false},
};

OpCall call_of(const Product& p) {
  OpCall c;
  c.kind = OpKind::matmul;
  c.shapes = {p.ta ? Shape{p.k, p.m} : Shape{p.m, p.k}, p.tb ? Shape{p.n, p.k} : Shape{p.k, p.n}, Shape{p.m, p.n}};
  c.modes = {Access::read, Access::read, p.accumulate ? Access::readwrite : Access::write};
  c.i[0] = p.ta, c.i[1] = p.tb, c.i[2] = p.accumulate;
  return c;
}

double rate(const OpCall& c, float* const* buf, double flops) {
  const int calls = std::max(1, static_cast<int>(2e-3 * 50e9 / flops));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) matmul_fast(c, buf, 0, 1);
  return flops * calls / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 9;
  openblas_set_num_threads(1);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::printf("| product | M x K x N | op | OpenBLAS GF/s | oneDNN GF/s | oneDNN / OpenBLAS | auto picks | max rel diff |\n");
  std::printf("|---|---|---|---:|---:|---:|---|---:|\n");
  for (const Product& p : kProducts) {
    const OpCall c = call_of(p);  // unchosen: what `auto` picks
    OpCall on_blas = c, on_dnnl = c;
    choose_gemm_impl(on_blas, GemmPreference::openblas);
    choose_gemm_impl(on_dnnl, GemmPreference::onednn);
    std::vector<float> a(static_cast<size_t>(p.m * p.k)), b(static_cast<size_t>(p.k * p.n));
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
    std::vector<float> c_blas(static_cast<size_t>(p.m * p.n), 0.0f), c_dnnl(c_blas.size(), 0.0f);
    float* buf_blas[] = {a.data(), b.data(), c_blas.data()};
    float* buf_dnnl[] = {a.data(), b.data(), c_dnnl.data()};
    const double flops = 2.0 * p.m * p.k * p.n;
    std::vector<double> blas, dnnl;
    for (int r = -1; r < reps; ++r) {  // round -1: warm-up (pages, JIT, packing buffers)
      const double rb = rate(on_blas, buf_blas, flops);
      const double rd = rate(on_dnnl, buf_dnnl, flops);
      if (r >= 0) blas.push_back(rb), dnnl.push_back(rd);
    }
    // One call each on zeroed C for the difference (accumulating runs have summed many calls).
    std::fill(c_blas.begin(), c_blas.end(), 0.0f);
    std::fill(c_dnnl.begin(), c_dnnl.end(), 0.0f);
    matmul_fast(on_blas, buf_blas, 0, 1);
    matmul_fast(on_dnnl, buf_dnnl, 0, 1);
    double diff = 0.0, scale = 0.0;
    for (size_t i = 0; i < c_blas.size(); ++i) {
      scale = std::max(scale, static_cast<double>(std::fabs(c_blas[i])));
      diff = std::max(diff, static_cast<double>(std::fabs(c_blas[i] - c_dnnl[i])));
    }
    std::sort(blas.begin(), blas.end());
    std::sort(dnnl.begin(), dnnl.end());
    const double mb = blas[blas.size() / 2], md = dnnl[dnnl.size() / 2];
    const char* op = p.ta ? (p.tb ? "A^T*B^T" : "A^T*B") : (p.tb ? "A*B^T" : "A*B");
    std::printf("| %s | %lld x %lld x %lld | %s%s | %.1f | %.1f | %.2f | %s | %.1e |\n", p.what,
                static_cast<long long>(p.m), static_cast<long long>(p.k), static_cast<long long>(p.n), op,
                p.accumulate ? " (+C)" : "", mb, md, md / mb, gemm_impl_of(c) == GemmImpl::onednn ? "oneDNN" : "OpenBLAS",
                scale > 0 ? diff / scale : diff);
  }
  std::printf("\n%s\n", gemm_description(GemmPreference::auto_).c_str());
  return 0;
}
