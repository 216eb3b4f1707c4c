#include "serve/kernels/activations.hpp"

#include <immintrin.h>

#include <cmath>
#include <cstring>

namespace corun::serve {
namespace {

// Cephes expf constants.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;
// Clamp so that 2^n stays a normal float (n in [-125, 127]).
constexpr float kExpLo = -87.0f, kExpHi = 88.0f;
// Cephes tanhf odd polynomial for |x| < 0.625.
constexpr float kT0 = -5.70498872745e-3f, kT1 = 2.06390887954e-2f, kT2 = -5.37397155531e-2f;
constexpr float kT3 = 1.33314422036e-1f, kT4 = -3.33332819422e-1f;
constexpr float kTanhSmall = 0.625f;
// tanh(9) rounds to 1 in float.
constexpr float kTanhBig = 9.0f;

float exp_scalar(float x) {
  // fmin/fmax would return the bound for NaN (a plausible gate value); NaN must stay NaN, as in std::exp.
  if (std::isnan(x)) return x;
  x = std::fmin(std::fmax(x, kExpLo), kExpHi);
  const float n = std::floor(x * kLog2e + 0.5f);
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  const float z = r * r;
  float y = ((((kP0 * r + kP1) * r + kP2) * r + kP3) * r + kP4) * r + kP5;
  y = y * z + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return y * scale;
}

float tanh_scalar(float x) {
  const float a = std::fabs(x);
  if (a < kTanhSmall) {
    const float z = x * x;
    return ((((kT0 * z + kT1) * z + kT2) * z + kT3) * z + kT4) * z * x + x;
  }
  const float t = 1.0f - 2.0f / (exp_scalar(2.0f * (a > kTanhBig ? kTanhBig : a)) + 1.0f);  // NaN stays NaN
  return x < 0 ? -t : t;
}

float sigmoid_scalar(float x) { return 1.0f / (1.0f + exp_scalar(-x)); }

__attribute__((target("avx2,fma"))) __m256 exp8(__m256 x) {
  // min_ps/max_ps return their second operand when either is NaN: x second, so a NaN lane stays NaN (its
  // exponent bits are garbage, but NaN times anything is NaN).
  x = _mm256_min_ps(_mm256_set1_ps(kExpHi), _mm256_max_ps(_mm256_set1_ps(kExpLo), x));
  const __m256 n = _mm256_floor_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(kLog2e), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  const __m256 z = _mm256_mul_ps(r, r);
  __m256 y = _mm256_fmadd_ps(_mm256_set1_ps(kP0), r, _mm256_set1_ps(kP1));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP2));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP3));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP4));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP5));
  y = _mm256_add_ps(_mm256_fmadd_ps(y, z, r), _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(bits));
}

__attribute__((target("avx2,fma"))) __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

__attribute__((target("avx2,fma"))) __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  // Small branch: odd polynomial.
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kT0), z, _mm256_set1_ps(kT1));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kT2));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kT3));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kT4));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  // Large branch: 1 - 2 / (e^2|x| + 1), with the sign of x.
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 capped = _mm256_min_ps(_mm256_set1_ps(kTanhBig), a);  // a second: NaN stays NaN
  const __m256 e = exp8(_mm256_add_ps(capped, capped));
  __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  big = _mm256_or_ps(big, _mm256_and_ps(sign, x));
  const __m256 is_small = _mm256_cmp_ps(a, _mm256_set1_ps(kTanhSmall), _CMP_LT_OQ);
  return _mm256_blendv_ps(big, small, is_small);
}

__attribute__((target("avx2,fma"))) void sigmoid_avx2(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, sigmoid8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) x[i] = sigmoid_scalar(x[i]);
}

__attribute__((target("avx2,fma"))) void tanh_avx2(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, tanh8(_mm256_loadu_ps(src + i)));
  for (; i < n; ++i) dst[i] = tanh_scalar(src[i]);
}

const bool kHasAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");

}  // namespace

bool activations_vectorised() { return kHasAvx2; }

void sigmoid_inplace(float* x, int64_t n) {
  if (kHasAvx2) return sigmoid_avx2(x, n);
  for (int64_t i = 0; i < n; ++i) x[i] = sigmoid_scalar(x[i]);
}

void tanh_copy(const float* src, float* dst, int64_t n) {
  if (kHasAvx2) return tanh_avx2(src, dst, n);
  for (int64_t i = 0; i < n; ++i) dst[i] = tanh_scalar(src[i]);
}

void tanh_inplace(float* x, int64_t n) { tanh_copy(x, x, n); }

}  // namespace corun::serve
