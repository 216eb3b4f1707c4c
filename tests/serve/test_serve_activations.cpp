// Vectorised sigmoid/tanh of the serving runtime against std:: in double over a dense sweep: 1e-6 relative.
#include "serve/kernels/activations.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

struct Sweep {
  std::vector<float> x;
};

// Every 2^-12 step of [-20, 20] (163841 points, all the curvature), plus a coarse grid out to +-100 and a
// few special values (signed zeros, the tanh branch point 0.625, tiny magnitudes).
Sweep sweep() {
  Sweep s;
  for (int i = -20 * 4096; i <= 20 * 4096; ++i) s.x.push_back(static_cast<float>(i) / 4096.0f);
  for (float v = -100.0f; v <= 100.0f; v += 0.37f) s.x.push_back(v);
  for (float v : {0.0f, -0.0f, 0.625f, -0.625f, 0.62499994f, 1e-30f, -1e-30f, 1e-7f, 3e-4f, -88.0f, 88.0f})
    s.x.push_back(v);
  return s;
}

double rel(double got, double want) { return std::fabs(got - want) / std::max(std::fabs(want), 1e-300); }

TEST(ServeActivations, SigmoidWithin1e6Relative) {
  const Sweep s = sweep();
  std::vector<float> y = s.x;
  corun::serve::sigmoid_inplace(y.data(), static_cast<int64_t>(y.size()));
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double want = 1.0 / (1.0 + std::exp(-static_cast<double>(s.x[i])));
    if (s.x[i] < -87.0f) {
      // The exact value is a denormal (or rounds to 0): only absolute accuracy is meaningful there.
      EXPECT_LE(std::fabs(y[i] - want), 1e-37) << "x=" << s.x[i];
      continue;
    }
    worst = std::max(worst, rel(y[i], want));
    ASSERT_LE(rel(y[i], want), 1e-6) << "x=" << s.x[i] << " got " << y[i] << " want " << want;
  }
  std::printf("sigmoid: worst relative error %.3g over %zu points (vectorised: %d)\n", worst, y.size(),
              corun::serve::activations_vectorised());
}

TEST(ServeActivations, TanhWithin1e6Relative) {
  const Sweep s = sweep();
  std::vector<float> y(s.x.size());
  corun::serve::tanh_copy(s.x.data(), y.data(), static_cast<int64_t>(y.size()));
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double want = std::tanh(static_cast<double>(s.x[i]));
    if (want == 0.0) {
      EXPECT_EQ(y[i], 0.0f) << "x=" << s.x[i];
      continue;
    }
    worst = std::max(worst, rel(y[i], want));
    ASSERT_LE(rel(y[i], want), 1e-6) << "x=" << s.x[i] << " got " << y[i] << " want " << want;
  }
  std::printf("tanh: worst relative error %.3g over %zu points\n", worst, y.size());
}

TEST(ServeActivations, TailsAndOddLengthsUseTheSameFormulas) {
  // Lengths that are not multiples of 8 go through the scalar tail: same accuracy, and in-place works.
  for (int n : {1, 7, 9, 17}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = -3.0f + 0.41f * i;
    std::vector<float> y = x;
    corun::serve::tanh_inplace(y.data(), n);
    for (int i = 0; i < n; ++i) EXPECT_LE(rel(y[static_cast<size_t>(i)], std::tanh(double(x[static_cast<size_t>(i)]))), 1e-6);
  }
}

}  // namespace

namespace {

// NaN in, NaN out, as std::exp/std::tanh and PyTorch give: a NaN hidden state must not come back as a
// plausible gate value. Lengths 8 and 17 cover the vector lanes and the scalar tail; the NaN sits in every
// position once. Infinities keep their limits (the reference formulas in double).
TEST(ServeActivations, NaNPropagatesAndInfinitiesKeepTheirLimits) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int n : {1, 8, 17}) {
    for (int at = 0; at < n; ++at) {
      std::vector<float> x(static_cast<size_t>(n), 0.5f);
      x[static_cast<size_t>(at)] = nan;
      std::vector<float> sig = x, th(x.size());
      corun::serve::sigmoid_inplace(sig.data(), n);
      corun::serve::tanh_copy(x.data(), th.data(), n);
      for (int i = 0; i < n; ++i) {
        const double xi = x[static_cast<size_t>(i)];
        const double want_sig = 1.0 / (1.0 + std::exp(-xi)), want_tanh = std::tanh(xi);
        if (i == at) {
          EXPECT_TRUE(std::isnan(sig[static_cast<size_t>(i)])) << "sigmoid(NaN) n=" << n << " at=" << at;
          EXPECT_TRUE(std::isnan(th[static_cast<size_t>(i)])) << "tanh(NaN) n=" << n << " at=" << at;
          EXPECT_TRUE(std::isnan(want_sig) && std::isnan(want_tanh));
          continue;
        }
        EXPECT_LE(rel(sig[static_cast<size_t>(i)], want_sig), 1e-6);
        EXPECT_LE(rel(th[static_cast<size_t>(i)], want_tanh), 1e-6);
      }
    }
  }
  std::vector<float> x = {inf, -inf, inf, -inf, inf, -inf, inf, -inf, inf, -inf};
  std::vector<float> sig = x, th(x.size());
  corun::serve::sigmoid_inplace(sig.data(), static_cast<int64_t>(x.size()));
  corun::serve::tanh_copy(x.data(), th.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(rel(th[i], std::tanh(static_cast<double>(x[i]))), 1e-6) << "tanh(" << x[i] << ") = " << th[i];
    if (x[i] > 0) EXPECT_EQ(sig[i], 1.0f) << "sigmoid(inf)";
    else EXPECT_LE(sig[i], 1e-37f) << "sigmoid(-inf)";
  }
}

}  // namespace
