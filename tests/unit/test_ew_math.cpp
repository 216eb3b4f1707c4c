// The float exp / sigmoid / tanh of the fast kernels (codelets/elementwise.hpp): polynomial code written for
// the vectoriser instead of libm calls, so their accuracy is checked here against double over every 61st
// float in [-120, 120] (about 34 million values) and at the special values.
#include "codelets/elementwise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

using namespace corun::codelets;

// |got - want| / |want|, for want of a normal magnitude (where a relative error means something).
double rel(float got, double want) { return std::fabs(static_cast<double>(got) - want) / std::fabs(want); }

constexpr double kUlp = 1.1920928955078125e-7;  // 2^-23

template <class F>
void sweep(F check) {
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 61) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    if (v > 120.0f) break;
    check(v);
    check(-v);
  }
}

TEST(EwMath, ExpOfNonPositiveIsWithinTwoUlp) {
  double worst = 0.0;
  sweep([&](float x) {
    if (x > 0.0f || x < -87.3f) return;
    worst = std::max(worst, rel(ew::exp_nonpositive_fast(x), std::exp(static_cast<double>(x))));
  });
  EXPECT_LT(worst, 2 * kUlp);
  EXPECT_EQ(ew::exp_nonpositive_fast(0.0f), 1.0f);
  EXPECT_EQ(ew::exp_nonpositive_fast(-0.0f), 1.0f);
  EXPECT_EQ(ew::exp_nonpositive_fast(-87.31f), 0.0f);
  EXPECT_EQ(ew::exp_nonpositive_fast(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(ew::exp_nonpositive_fast(std::numeric_limits<float>::quiet_NaN())));
}

TEST(EwMath, SigmoidAndTanhAreWithinTwoUlpOfDouble) {
  double worst_sigmoid = 0.0, worst_tanh = 0.0;
  sweep([&](float x) {
    const double xd = x;
    const double sd = xd >= 0 ? 1.0 / (1.0 + std::exp(-xd)) : std::exp(xd) / (1.0 + std::exp(xd));
    if (sd > 1e-37) worst_sigmoid = std::max(worst_sigmoid, rel(ew::sigmoid_fast(x), sd));
    const double t = std::tanh(xd);
    if (std::fabs(t) > 1e-37) worst_tanh = std::max(worst_tanh, rel(ew::tanh_fast(x), t));
  });
  EXPECT_LT(worst_sigmoid, 2 * kUlp);
  EXPECT_LT(worst_tanh, 2 * kUlp);
}

TEST(EwMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(ew::sigmoid_fast(inf), 1.0f);
  EXPECT_EQ(ew::sigmoid_fast(-inf), 0.0f);
  EXPECT_EQ(ew::sigmoid_fast(0.0f), 0.5f);
  EXPECT_EQ(ew::sigmoid_fast(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(ew::sigmoid_fast(nan)));
  EXPECT_EQ(ew::tanh_fast(inf), 1.0f);
  EXPECT_EQ(ew::tanh_fast(-inf), -1.0f);
  EXPECT_EQ(ew::tanh_fast(20.0f), 1.0f);
  EXPECT_EQ(ew::tanh_fast(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(ew::tanh_fast(-0.0f)));
  EXPECT_EQ(ew::tanh_fast(1e-30f), 1e-30f);  // odd polynomial: exact for tiny arguments
  EXPECT_TRUE(std::isnan(ew::tanh_fast(nan)));
  // Monotone across the switch from the polynomial to (1 - e) / (1 + e).
  EXPECT_LE(ew::tanh_fast(std::nextafter(0.625f, 0.0f)), ew::tanh_fast(0.625f));
}

// The hard activations at their kinks take PyTorch's sides (values from torch 1.13: hardswish_backward gives
// -0.5 and 1.5 at -3 and 3, hardsigmoid_backward 0 at both), with the same forward values, and a NaN input
// gives a NaN output (the selects, unlike std::min/std::max, never drop it).
TEST(EwMath, HardActivationsAtTheKinksFollowPyTorch) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float a = 1.0f / 6.0f, b = 0.5f;
  for (const bool ref : {false, true}) {
    auto hsw = [&](float x) { return ref ? ew::hard_swish_ref(x) : ew::hard_swish_fast(x); };
    auto hsw_grad = [&](float x, float dy) {
      return ref ? ew::hard_swish_grad_ref(x, dy) : ew::hard_swish_grad_fast(x, dy);
    };
    auto hsg = [&](float x) { return ref ? ew::hard_sigmoid_ref(x, a, b) : ew::hard_sigmoid_fast(x, a, b); };
    auto hsg_grad = [&](float x) {
      return ref ? ew::hard_sigmoid_grad_ref(x, 1.0f, a, b) : ew::hard_sigmoid_grad_fast(x, 1.0f, a, b);
    };
    SCOPED_TRACE(ref ? "ref" : "fast");
    EXPECT_EQ(hsw_grad(-3.0f, 1.0f), -0.5f);
    EXPECT_EQ(hsw_grad(3.0f, 1.0f), 1.5f);
    EXPECT_EQ(hsw_grad(std::nextafter(-3.0f, -inf), 1.0f), 0.0f);
    EXPECT_EQ(hsw_grad(std::nextafter(3.0f, inf), 1.0f), 1.0f);
    EXPECT_EQ(hsw(-3.0f), 0.0f);
    EXPECT_EQ(hsw(3.0f), 3.0f);
    EXPECT_EQ(hsw(-1.0f), -0.3333333432674408f);
    EXPECT_EQ(hsw(inf), inf);
    EXPECT_TRUE(std::isnan(hsw(-inf)));  // -inf * 0, as in PyTorch
    EXPECT_TRUE(std::isnan(hsw(nan)));
    EXPECT_TRUE(std::isnan(hsw_grad(nan, 1.0f)));
    EXPECT_EQ(hsg_grad(-3.0f), 0.0f);
    EXPECT_EQ(hsg_grad(3.0f), 0.0f);
    EXPECT_EQ(hsg_grad(0.0f), a);
    EXPECT_EQ(hsg_grad(nan), 0.0f);  // PyTorch's too: X only picks the branch
    EXPECT_EQ(hsg(-3.0f), 0.0f);
    EXPECT_EQ(hsg(3.0f), 1.0f);
    EXPECT_EQ(hsg(-inf), 0.0f);
    EXPECT_EQ(hsg(inf), 1.0f);
    EXPECT_TRUE(std::isnan(hsg(nan)));
  }
}

}  // namespace
