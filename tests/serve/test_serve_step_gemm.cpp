// The step product C[m, n] += A[m, k] W[n, k]^T under OpenBLAS and libxsmm's JIT kernels
// (serve/kernels/step_gemm.hpp) against a double-precision loop: leading dimensions wider than the
// product, C accumulated into, one row (the GEMV), odd sizes; and the shape rule of the automatic choice.
#include "serve/kernels/step_gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace corun::serve {
namespace {

struct Shape {
  int m, n, k;
};

void check(StepGemmKernel want, const Shape& s) {
  const int ldw = s.k + 3, lda = s.k + 5, ldc = s.n + 7;
  std::mt19937 rng(static_cast<unsigned>(s.m * 131 + s.n * 7 + s.k));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(s.n) * ldw), a(static_cast<size_t>(s.m) * lda),
      c(static_cast<size_t>(s.m) * ldc);
  for (float& v : w) v = u(rng);
  for (float& v : a) v = u(rng);
  for (float& v : c) v = u(rng);
  std::vector<double> want_c(c.begin(), c.end());
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < s.n; ++j) {
      double acc = want_c[static_cast<size_t>(i) * ldc + j];
      for (int p = 0; p < s.k; ++p)
        acc += static_cast<double>(a[static_cast<size_t>(i) * lda + p]) * w[static_cast<size_t>(j) * ldw + p];
      want_c[static_cast<size_t>(i) * ldc + j] = acc;
    }
  const StepGemm g(want, s.m, s.n, s.k, w.data(), ldw, lda, ldc);
  const bool xsmm = want == StepGemmKernel::libxsmm && have_libxsmm() && s.m >= 2;
  EXPECT_EQ(g.kernel(), xsmm ? StepGemmKernel::libxsmm : StepGemmKernel::openblas) << s.m << "x" << s.n << "x" << s.k;
  std::fill(w.begin(), w.end(), 0.0f);  // the kernel packed its own copy
  g.run(a.data(), c.data());
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i) * ldc + j;
      if (j >= s.n) {
        EXPECT_EQ(c[at], static_cast<float>(want_c[at])) << "the padding of row " << i << " was written";
        continue;
      }
      EXPECT_NEAR(c[at], want_c[at], 1e-5 * (std::sqrt(static_cast<double>(s.k)) + std::fabs(want_c[at])))
          << s.m << "x" << s.n << "x" << s.k << " at (" << i << ", " << j << ")";
    }
}

TEST(ServeStepGemm, BothKernelsMatchADoubleLoop) {
  for (StepGemmKernel k : {StepGemmKernel::openblas, StepGemmKernel::libxsmm})
    for (const Shape& s : {Shape{1, 64, 32}, Shape{2, 80, 20}, Shape{3, 17, 9}, Shape{10, 512, 256},
                           Shape{5, 1024, 256}, Shape{64, 96, 48}, Shape{7, 1, 1}})
      check(k, s);
}

TEST(ServeStepGemm, TheRulePicksLibxsmmForSmallBatchesWithCachedWeights) {
  const StepGemmKernel small = have_libxsmm() ? StepGemmKernel::libxsmm : StepGemmKernel::openblas;
  EXPECT_EQ(prefer_step_gemm(10, 512, 256), small);
  EXPECT_EQ(prefer_step_gemm(64, 1024, 1024), small);             // 1 Mi weights: 4 MiB
  EXPECT_EQ(prefer_step_gemm(3, 512, 256), small);
  EXPECT_EQ(prefer_step_gemm(2, 512, 256), StepGemmKernel::openblas);    // two rows: OpenBLAS was faster
  EXPECT_EQ(prefer_step_gemm(1, 512, 256), StepGemmKernel::openblas);    // one row: the GEMV
  EXPECT_EQ(prefer_step_gemm(65, 512, 256), StepGemmKernel::openblas);   // OpenBLAS's own blocking
  EXPECT_EQ(prefer_step_gemm(10, 4096, 1024), StepGemmKernel::openblas); // weights beyond the caches
}

TEST(ServeStepGemm, KernelNamesRoundTrip) {
  for (StepGemmKernel k : {StepGemmKernel::automatic, StepGemmKernel::openblas, StepGemmKernel::libxsmm}) {
    StepGemmKernel back = StepGemmKernel::automatic;
    EXPECT_TRUE(parse_step_gemm(step_gemm_name(k), &back));
    EXPECT_EQ(back, k);
  }
  StepGemmKernel back = StepGemmKernel::openblas;
  EXPECT_FALSE(parse_step_gemm("mkl", &back));
  EXPECT_STREQ(step_gemm_name(StepGemmKernel::automatic), "auto");
}

}  // namespace
}  // namespace corun::serve
