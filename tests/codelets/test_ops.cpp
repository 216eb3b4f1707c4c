// test_ops — ggml test-backend-ops style check of every kernel.
//
// For each case of op_cases.cpp: the reference kernel and the fast kernel run as SPMD teams of several
// widths (members called one after another, exactly what concurrent members compute). Checks: fast
// agrees with reference (normalised MSE), every width is bitwise equal to width 1, no write outside a
// buffer (guard bands) and every output element written (sentinel fill).
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/elementwise.hpp"
#include "codelets/matmul/openblas_core.hpp"
#include "codelets/matmul/gemm_impls.hpp"
#include "codelets/op.hpp"
#include "codelets/pool/pool.hpp"
#include "max_pool_calls.hpp"
#include "tests/common/float_bits.hpp"
#include "op_cases.hpp"

#include <gtest/gtest.h>

#include <corun/error.hpp>

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace corun::codelets {
namespace testing {

// Failure messages name the case instead of dumping its bytes.
void PrintTo(const OpCaseSpec& c, std::ostream* os) { *os << c.name; }

}  // namespace testing
namespace {

using testing::OpCaseSpec;

constexpr int64_t kGuard = 64;               // floats of guard band on each side of a buffer
constexpr uint32_t kGuardBits = 0x7fa0dead;  // NaN payloads no kernel computes
constexpr uint32_t kSentinelBits = 0x7fc0beef;
const int kWidths[] = {1, 2, 3, 4, 8, 16};  // 3 and 16 add uneven splits and members with nothing to do

using ::corun::testing::from_bits;
using ::corun::testing::to_bits;

/// One buffer with guard bands: [guard | data | guard].
struct GuardedBuffer {
  std::vector<float> storage;
  float* data() { return storage.data() + kGuard; }
  int64_t size() const { return static_cast<int64_t>(storage.size()) - 2 * kGuard; }
};

/// Initial contents of every buffer; outputs (write mode) get the sentinel.
/// FNV-1a of the case's name: a fixed, per-case seed, the same on every machine.
uint32_t case_seed(const OpCaseSpec& c) {
  uint32_t seed = 2166136261u;
  for (char ch : c.name) seed = (seed ^ static_cast<uint8_t>(ch)) * 16777619u;
  return seed;
}

std::vector<std::vector<float>> make_inputs(const OpCaseSpec& c) {
  std::mt19937 rng(case_seed(c));
  std::uniform_real_distribution<float> dist(-c.scale, c.scale);
  std::vector<std::vector<float>> init;
  for (int b = 0; b < c.call.nbuffers(); ++b) {
    std::vector<float> v(static_cast<size_t>(numel(c.call, b)));
    if (c.call.modes[static_cast<size_t>(b)] == Access::write)
      std::fill(v.begin(), v.end(), from_bits(kSentinelBits));
    else
      for (float& x : v) x = dist(rng);
    init.push_back(std::move(v));
  }
  for (const auto& fill : c.indices) {
    std::uniform_int_distribution<int64_t> pick(fill.low, fill.limit - 1);
    for (float& x : init[static_cast<size_t>(fill.buffer)]) x = static_cast<float>(pick(rng));
  }
  return init;
}

/// Runs `kernel` as a team of `width` and stores every buffer's final contents in `result`. Reports
/// guard-band damage and unwritten outputs as (fatal) test failures.
/// `finite_inputs`: every output element must be finite too (false for the NaN / inf cases).
void run_team(const OpCaseSpec& c, Kernel kernel, int width, const std::vector<std::vector<float>>& init,
              std::vector<std::vector<float>>& result, bool finite_inputs = true) {
  std::vector<GuardedBuffer> bufs(init.size());
  std::vector<float*> ptrs;
  for (size_t b = 0; b < init.size(); ++b) {
    bufs[b].storage.assign(init[b].size() + 2 * kGuard, from_bits(kGuardBits));
    std::copy(init[b].begin(), init[b].end(), bufs[b].data());
    ptrs.push_back(bufs[b].data());
  }
  for (int rank = 0; rank < width; ++rank) kernel(c.call, ptrs.data(), rank, width);

  result.clear();
  for (size_t b = 0; b < bufs.size(); ++b) {
    const std::vector<float>& s = bufs[b].storage;
    const int64_t n = bufs[b].size();
    for (int64_t g = 0; g < kGuard; ++g) {
      ASSERT_EQ(to_bits(s[static_cast<size_t>(g)]), kGuardBits)
          << "buffer " << b << " width " << width << ": write before the buffer";
      ASSERT_EQ(to_bits(s[static_cast<size_t>(kGuard + n + g)]), kGuardBits)
          << "buffer " << b << " width " << width << ": write after the buffer";
    }
    const float* data = s.data() + kGuard;
    if (c.call.modes[b] != Access::read) {
      for (int64_t e = 0; e < n; ++e) {
        ASSERT_NE(to_bits(data[e]), kSentinelBits)
            << "buffer " << b << " width " << width << ": element " << e << " never written";
        if (finite_inputs) {
          ASSERT_TRUE(std::isfinite(data[e]))
              << "buffer " << b << " width " << width << ": element " << e << " is " << data[e];
        }
      }
    } else {
      EXPECT_EQ(std::memcmp(data, init[b].data(), init[b].size() * sizeof(float)), 0)
          << "buffer " << b << " is read-only but was modified";
    }
    result.emplace_back(data, data + n);
  }
}

/// Runs each member of a `width` team alone on fresh buffers and checks that the output elements the
/// members write are disjoint and cover every output (each element written exactly once). A write is
/// seen as a change from the initial contents; for readwrite buffers a write of the same value goes
/// unseen, so those are only checked for overlap where a change is visible.
void check_write_footprints(const OpCaseSpec& c, Kernel kernel, int width,
                            const std::vector<std::vector<float>>& init) {
  std::vector<std::vector<int>> owner(init.size());
  for (size_t b = 0; b < init.size(); ++b) owner[b].assign(init[b].size(), -1);
  for (int rank = 0; rank < width; ++rank) {
    std::vector<std::vector<float>> bufs = init;
    std::vector<float*> ptrs;
    for (std::vector<float>& v : bufs) ptrs.push_back(v.data());
    kernel(c.call, ptrs.data(), rank, width);
    for (size_t b = 0; b < bufs.size(); ++b)
      for (size_t e = 0; e < bufs[b].size(); ++e) {
        if (to_bits(bufs[b][e]) == to_bits(init[b][e])) continue;
        ASSERT_EQ(owner[b][e], -1) << "buffer " << b << " element " << e << " written by members "
                                   << owner[b][e] << " and " << rank << " of " << width;
        owner[b][e] = rank;
      }
  }
  for (size_t b = 0; b < init.size(); ++b) {
    if (c.call.modes[b] != Access::write) continue;
    for (size_t e = 0; e < owner[b].size(); ++e)
      ASSERT_NE(owner[b][e], -1) << "buffer " << b << " element " << e << " written by no member of "
                                 << width;
  }
}

const int kNonFiniteWidths[] = {1, 3, 8};  // the NaN / inf cases: fewer widths, no footprints (3x the runs)

// Runs `kernel` at every width (with `finite_inputs` false, the NaN / inf cases': kNonFiniteWidths, every
// output may be non-finite, no write footprints); returns the width-1 result after checking the others bitwise.
std::vector<std::vector<float>> run_all_widths(const OpCaseSpec& c, Kernel kernel, const char* which,
                                               const std::vector<std::vector<float>>& init,
                                               bool finite_inputs = true) {
  std::vector<std::vector<float>> base;
  const std::vector<int> widths = finite_inputs ? std::vector<int>(std::begin(kWidths), std::end(kWidths))
                                                : std::vector<int>(std::begin(kNonFiniteWidths),
                                                                   std::end(kNonFiniteWidths));
  for (int width : widths) {
    SCOPED_TRACE(std::string(which) + " kernel, width " + std::to_string(width));
    std::vector<std::vector<float>> out;
    run_team(c, kernel, width, init, out, finite_inputs);
    if (::testing::Test::HasFatalFailure()) return {};
    if (finite_inputs) check_write_footprints(c, kernel, width, init);
    if (::testing::Test::HasFatalFailure()) return {};
    if (width == 1) {
      base = std::move(out);
      continue;
    }
    for (size_t b = 0; b < out.size(); ++b)
      EXPECT_EQ(std::memcmp(out[b].data(), base[b].data(), out[b].size() * sizeof(float)), 0)
          << which << " buffer " << b << " differs bitwise between width 1 and width " << width;
  }
  return base;
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0.0, norm = 0.0;
  for (size_t e = 0; e < want.size(); ++e) {
    const double d = static_cast<double>(got[e]) - want[e];
    err += d * d;
    norm += static_cast<double>(want[e]) * want[e];
  }
  return norm == 0.0 ? err : err / norm;
}

double max_rel_err(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0.0, scale = 0.0;
  for (size_t e = 0; e < want.size(); ++e) {
    err = std::max(err, std::fabs(static_cast<double>(got[e]) - want[e]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[e])));
  }
  return scale == 0.0 ? err : err / scale;
}

class OpCase : public ::testing::TestWithParam<OpCaseSpec> {
 protected:
  static void SetUpTestSuite() { openblas_set_num_threads(1); }  // the engine runs BLAS single-threaded
};

// Fast vs reference at every width (the body of every suite below).
void check_case(const OpCaseSpec& c) {
  const OpInfo& info = op_info(c.call.kind);
  const std::vector<std::vector<float>> init = make_inputs(c);
  const std::vector<std::vector<float>> ref = run_all_widths(c, info.ref, "ref", init);
  if (::testing::Test::HasFatalFailure()) return;
  const std::vector<std::vector<float>> fast = run_all_widths(c, info.fast, "fast", init);
  if (::testing::Test::HasFatalFailure()) return;
  for (size_t b = 0; b < init.size(); ++b) {
    if (c.call.modes[b] == Access::read) continue;
    EXPECT_LT(nmse(fast[b], ref[b]), 1e-10) << "fast vs ref, buffer " << b;
    if (c.call.kind == OpKind::matmul) {
      EXPECT_LT(max_rel_err(fast[b], ref[b]), 1e-5) << "fast vs ref, max error";
    }
  }
}

TEST_P(OpCase, Matches) { check_case(GetParam()); }

// ---- NaN and infinity (issue 52) ----
//
// Every case again with one input element made NaN, +inf or -inf, in each input buffer in turn. Checked: no
// write outside a buffer, every output written, and each kernel's bits the same at widths 1, 3 and 8 (NaN
// payloads included). On the output elements that depend on the poisoned input: with a NaN, the reference and
// the fast kernel both give NaN, as IEEE arithmetic and PyTorch do; with an infinity, both give a non-finite
// value or both a finite one (inf - inf is NaN in one and -inf in another through different but equally valid
// orders of operations). "Depends" is measured, not declared: the element changes when the input is set to
// +-kProbe instead. So a relu over a negative input or a max pool whose window's maximum was elsewhere is held
// to it, while a dropped element of dropout, pow(x, 0) or a convolution output whose window holds the NaN only
// at a padded tap is not: there im2col multiplies the padding's 0 by the NaN and the reference skips the tap.

/// Inputs that only pick a branch where a NaN goes to a finite gradient in PyTorch's backward too (the
/// comparison is false for NaN): relu_grad, leaky_relu_grad, clip_grad and hard_sigmoid_grad's X (PyTorch's
/// hardsigmoid_backward gives 0 at a NaN), max_pool_grad's X (it picks where dY goes), phased_gate_grad's T and
/// S (dk/dphi is piecewise constant, T - S picks the piece; dTAU still gets their NaN), dropout's step (a hash
/// seed).
bool nan_may_vanish(OpKind kind, int buffer) {
  switch (kind) {
    case OpKind::relu_grad:
    case OpKind::leaky_relu_grad:
    case OpKind::clip_grad:
    case OpKind::hard_sigmoid_grad:
    case OpKind::max_pool_grad:
    case OpKind::dropout_grad:
      return buffer == 0;
    case OpKind::phased_gate_grad:
      return buffer == 0 || buffer == 2;
    case OpKind::dropout:
      return buffer == 1;
    default:
      return false;
  }
}

/// The input buffers a case's values can be poisoned in: read or readwrite, and not integers (indices).
std::vector<int> value_inputs(const OpCaseSpec& c) {
  std::vector<int> out;
  for (int b = 0; b < c.call.nbuffers(); ++b) {
    bool integer = false;
    for (const auto& fill : c.indices) integer = integer || fill.buffer == b;
    if (c.call.modes[static_cast<size_t>(b)] != Access::write && !integer) out.push_back(b);
  }
  return out;
}

/// For each output buffer, which elements change (bitwise, NaNs alike) when input element (b, e) is set
/// to +kProbe or -kProbe instead of its value: the elements that depend on it.
std::vector<std::vector<bool>> dependents(const OpCaseSpec& c, const std::vector<std::vector<float>>& init, int b,
                                          size_t e) {
  const float kProbe = 1e4f * c.scale;
  Kernel ref = op_info(c.call.kind).ref;
  std::vector<std::vector<float>> base, probed;
  run_team(c, ref, 1, init, base, false);
  std::vector<std::vector<bool>> dep(init.size());
  for (size_t o = 0; o < init.size(); ++o) dep[o].assign(init[o].size(), false);
  for (float probe : {kProbe, -kProbe}) {
    std::vector<std::vector<float>> in = init;
    in[static_cast<size_t>(b)][e] = probe;
    run_team(c, ref, 1, in, probed, false);
    for (size_t o = 0; o < init.size(); ++o) {
      if (c.call.modes[o] == Access::read) continue;
      for (size_t k = 0; k < base[o].size(); ++k) {
        const bool both_nan = std::isnan(base[o][k]) && std::isnan(probed[o][k]);
        if (!both_nan && to_bits(base[o][k]) != to_bits(probed[o][k])) dep[o][k] = true;
      }
    }
  }
  return dep;
}

/// The checks of one poisoned input: element e of buffer b set to `bad`; `dep` from dependents().
void check_poisoned(const OpCaseSpec& c, const std::vector<std::vector<float>>& init, int b, size_t e, float bad,
                    const std::vector<std::vector<bool>>& dep) {
  std::vector<std::vector<float>> in = init;
  in[static_cast<size_t>(b)][e] = bad;
  SCOPED_TRACE("input buffer " + std::to_string(b) + " element " + std::to_string(e) + " = " + std::to_string(bad));
  const OpInfo& info = op_info(c.call.kind);
  const std::vector<std::vector<float>> ref = run_all_widths(c, info.ref, "ref", in, false);
  if (::testing::Test::HasFatalFailure()) return;
  const std::vector<std::vector<float>> fast = run_all_widths(c, info.fast, "fast", in, false);
  if (::testing::Test::HasFatalFailure()) return;
  const bool must_be_nan = std::isnan(bad) && !nan_may_vanish(c.call.kind, b);
  for (size_t o = 0; o < in.size(); ++o) {
    if (c.call.modes[o] == Access::read) continue;
    int reported = 0;  // the first few elements of a buffer, not thousands
    for (size_t k = 0; k < ref[o].size() && reported < 3; ++k) {
      if (!dep[o][k]) continue;
      const float r = ref[o][k], f = fast[o][k];
      const bool bad_nan = must_be_nan && !(std::isnan(r) && std::isnan(f));
      const bool bad_class = !std::isnan(bad) && std::isfinite(r) != std::isfinite(f) &&
                             !(c.infinity_may_become_nan && std::isnan(f));
      if (bad_nan || bad_class) {
        ADD_FAILURE() << "output buffer " << o << " element " << k << " depends on the poisoned input: reference "
                      << r << ", fast " << f << (bad_nan ? " (a NaN turned finite)" : " (finite in one kernel only)");
        ++reported;
      }
    }
  }
}

/// Every value input of the case poisoned in turn, each with NaN, +inf and -inf, at one element chosen per
/// case and buffer (seeded by the case's name: the same on every machine).
void check_non_finite_case(const OpCaseSpec& c) {
  const std::vector<std::vector<float>> init = make_inputs(c);
  uint64_t seed = case_seed(c);
  for (int b : value_inputs(c)) {
    const size_t n = init[static_cast<size_t>(b)].size();
    if (n == 0) continue;
    const size_t e = (seed += 0x9e3779b97f4a7c15ULL) % n;
    const std::vector<std::vector<bool>> dep = dependents(c, init, b, e);
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()}) {
      check_poisoned(c, init, b, e, bad, dep);
      if (::testing::Test::HasFailure()) return;  // one poisoned input's report is enough to read
    }
  }
}

TEST_P(OpCase, NanAndInfinityPropagate) { check_non_finite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Ops, OpCase, ::testing::ValuesIn(testing::all_op_cases()),
                         [](const ::testing::TestParamInfo<OpCaseSpec>& p) { return p.param.name; });

// The oneDNN convolution kernels forced on (CORUN_CONV_KERNEL=dnnl: the list's choice under that preference,
// set on the call as the plan step sets it) whatever the automatic choice says; skipped, with the reason, on a
// build without oneDNN or a CPU without AVX2.
class DnnlConv : public OpCase {
 protected:
  void SetUp() override {
    const ConvGeometry probe{1, 8, 3, 3, 8, 1, 1, 3, 3, 1, 1, 0, 0, 1, 1, 1};
    if (!dnnl_conv_supported(probe))
      GTEST_SKIP() << "oneDNN convolutions unavailable (built without libdnnl-dev, or a CPU without AVX2)";
  }
};

// Each case with its convolution passes given the list's choice under CORUN_CONV_KERNEL=dnnl, as the plan step
// gives it: oneDNN wherever it runs the call.
OpCaseSpec on_onednn(OpCaseSpec c) {
  choose_conv_impl(c.call, ConvKernel::dnnl);
  return c;
}

TEST_P(DnnlConv, Matches) {
  const OpCaseSpec c = on_onednn(GetParam());
  if (conv_pass_geometry(c.call)) {
    ASSERT_TRUE(is_onednn(conv_impl_of(c.call))) << conv_impl_name(conv_impl_of(c.call));
  }
  check_case(c);
}
TEST_P(DnnlConv, NanAndInfinityPropagate) { check_non_finite_case(on_onednn(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Ops, DnnlConv, ::testing::ValuesIn(testing::dnnl_conv_op_cases()),
                         [](const ::testing::TestParamInfo<OpCaseSpec>& p) { return p.param.name; });

// matmul and batch_matmul on each sgemm library (the list's choice under CORUN_GEMM_KERNEL=onednn / openblas,
// set on the call as the plan step sets it), whatever the automatic choice on this CPU: each must match the
// reference and give the same bits at every width.
std::vector<OpCaseSpec> product_cases() {
  std::vector<OpCaseSpec> out;
  for (const OpCaseSpec& c : testing::all_op_cases())
    if (c.call.kind == OpKind::matmul || c.call.kind == OpKind::batch_matmul) out.push_back(c);
  return out;
}

OpCaseSpec on_library(OpCaseSpec c, GemmPreference preference) {
  choose_gemm_impl(c.call, preference);
  return c;
}

class GemmOnednn : public OpCase {};
class GemmOpenblas : public OpCase {};

TEST_P(GemmOnednn, Matches) {
  const OpCaseSpec c = on_library(GetParam(), GemmPreference::onednn);
  // oneDNN where the build has it (the list's onednn entry takes every product under this preference).
  const bool onednn = onednn_gemm_declines(GemmShape{}, GemmPreference::onednn).empty();
  EXPECT_EQ(gemm_impl_of(c.call), onednn ? GemmImpl::onednn : GemmImpl::openblas);
  check_case(c);
}
TEST_P(GemmOpenblas, Matches) {
  const OpCaseSpec c = on_library(GetParam(), GemmPreference::openblas);
  EXPECT_EQ(gemm_impl_of(c.call), GemmImpl::openblas);
  check_case(c);
}

INSTANTIATE_TEST_SUITE_P(Ops, GemmOnednn, ::testing::ValuesIn(product_cases()),
                         [](const ::testing::TestParamInfo<OpCaseSpec>& p) { return p.param.name; });
INSTANTIATE_TEST_SUITE_P(Ops, GemmOpenblas, ::testing::ValuesIn(product_cases()),
                         [](const ::testing::TestParamInfo<OpCaseSpec>& p) { return p.param.name; });

TEST(GemmKernel, OpenBlasCoresWithoutAvx2AreKnown) {
  for (const char* old : {"Prescott", "prescott", "Core2", "Nehalem", "Sandybridge", "Generic"})
    EXPECT_TRUE(openblas_core_lacks_avx2(old)) << old;
  for (const char* recent : {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen"})
    EXPECT_FALSE(openblas_core_lacks_avx2(recent)) << recent;
  EXPECT_EQ(openblas_kernels_older_than_cpu(),
            cpu_vector_isa().avx2_fma && openblas_core_lacks_avx2(openblas_core_name()));
}

// The fused cells' vector loops (their AVX-512 / AVX2 copies on such CPUs, codelets/simd_clones.hpp) give
// the bits of the per-element formulas evaluated one float at a time here, as the unfused graph's ops do.
// H = 40: two whole 16-unit blocks and a tail.
std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(FusedCells, LstmCellGivesTheBitsOfItsScalarFormulas) {
  const int64_t B = 3, H = 40;
  std::mt19937 rng(5);
  std::vector<float> z = random_floats(rng, B * 4 * H, 3.0f), cp = random_floats(rng, B * H, 1.0f);
  std::vector<float> c(B * H), h(B * H), a(B * 4 * H), tc(B * H);
  OpCall call;
  call.kind = OpKind::lstm_cell;
  call.shapes = {Shape{B, 4 * H}, Shape{B, H}, Shape{B, H}, Shape{B, H}, Shape{B, 4 * H}, Shape{B, H}};
  float* buf[] = {z.data(), cp.data(), c.data(), h.data(), a.data(), tc.data()};
  op_info(OpKind::lstm_cell).fast(call, buf, 0, 1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t u = 0; u < H; ++u) {
      const float* zr = z.data() + b * 4 * H;
      const float i = ew::sigmoid_fast(zr[u]), f = ew::sigmoid_fast(zr[H + u]);
      const float g = ew::tanh_fast(zr[2 * H + u]), o = ew::sigmoid_fast(zr[3 * H + u]);
      const float cc = ew::add_fast(ew::mul_fast(f, cp[b * H + u]), ew::mul_fast(i, g));
      const float t = ew::tanh_fast(cc);
      ASSERT_EQ(c[b * H + u], cc) << b << "," << u;
      ASSERT_EQ(tc[b * H + u], t) << b << "," << u;
      ASSERT_EQ(h[b * H + u], ew::mul_fast(o, t)) << b << "," << u;
      ASSERT_EQ(a[b * 4 * H + 2 * H + u], g) << b << "," << u;
    }
  // The backward, from those saved activations.
  std::vector<float> dh = random_floats(rng, B * H, 1.0f), dcn = random_floats(rng, B * H, 1.0f);
  std::vector<float> dz(B * 4 * H), dcp(B * H);
  OpCall grad;
  grad.kind = OpKind::lstm_cell_grad;
  grad.shapes = {Shape{B, 4 * H}, Shape{B, H}, Shape{B, H}, Shape{B, H}, Shape{B, H}, Shape{B, 4 * H}, Shape{B, H}};
  float* gbuf[] = {a.data(), cp.data(), tc.data(), dh.data(), dcn.data(), dz.data(), dcp.data()};
  op_info(OpKind::lstm_cell_grad).fast(grad, gbuf, 0, 1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t u = 0; u < H; ++u) {
      const float* ar = a.data() + b * 4 * H;
      const int64_t e = b * H + u;
      const float i = ar[u], f = ar[H + u], g = ar[2 * H + u], o = ar[3 * H + u];
      const float dc = dcn[e] + ew::tanh_grad_fast(tc[e], dh[e] * o);
      ASSERT_EQ(dz[b * 4 * H + u], ew::sigmoid_grad_fast(i, dc * g)) << b << "," << u;
      ASSERT_EQ(dz[b * 4 * H + 2 * H + u], ew::tanh_grad_fast(g, dc * i)) << b << "," << u;
      ASSERT_EQ(dz[b * 4 * H + 3 * H + u], ew::sigmoid_grad_fast(o, dh[e] * tc[e])) << b << "," << u;
      ASSERT_EQ(dcp[e], dc * f) << b << "," << u;
    }
}

TEST(FusedCells, GruCellGivesTheBitsOfItsScalarFormulas) {
  const int64_t B = 3, H = 40;
  std::mt19937 rng(6);
  std::vector<float> xp = random_floats(rng, B * 3 * H, 2.0f), hp = random_floats(rng, B * 3 * H, 2.0f);
  std::vector<float> hprev = random_floats(rng, B * H, 1.0f), h(B * H), a(B * 3 * H);
  OpCall call;
  call.kind = OpKind::gru_cell;
  call.shapes = {Shape{B, 3 * H}, Shape{B, 3 * H}, Shape{B, H}, Shape{B, H}, Shape{B, 3 * H}};
  float* buf[] = {xp.data(), hp.data(), hprev.data(), h.data(), a.data()};
  op_info(OpKind::gru_cell).fast(call, buf, 0, 1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t u = 0; u < H; ++u) {
      const float* x = xp.data() + b * 3 * H;
      const float* r3 = hp.data() + b * 3 * H;
      const float zg = ew::sigmoid_fast(x[u] + r3[u]), r = ew::sigmoid_fast(x[H + u] + r3[H + u]);
      const float n = ew::tanh_fast(x[2 * H + u] + r * r3[2 * H + u]);
      ASSERT_EQ(a[b * 3 * H + u], zg) << b << "," << u;
      ASSERT_EQ(a[b * 3 * H + 2 * H + u], n) << b << "," << u;
      ASSERT_EQ(h[b * H + u], (1.0f - zg) * n + zg * hprev[b * H + u]) << b << "," << u;
    }
}

// The table is generated from codelets/ops.def: every kind has both kernels, a width, a unique name that
// op_kind() finds again, and an ew_chain arity of 0, 1 or 2.
TEST(KernelTable, EveryKindHasItsKernels) {
  std::set<std::string> names;
  for (int k = 0; k < static_cast<int>(OpKind::count_); ++k) {
    const OpInfo& info = op_info(static_cast<OpKind>(k));
    ASSERT_NE(info.name, nullptr);
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    EXPECT_EQ(op_kind(info.name), static_cast<OpKind>(k)) << info.name;
    EXPECT_NE(info.ref, nullptr) << info.name;
    EXPECT_NE(info.fast, nullptr) << info.name;
    EXPECT_GE(info.max_width, 1) << info.name;
    EXPECT_TRUE(info.ew_arity >= 0 && info.ew_arity <= 2) << info.name;
    EXPECT_NE(info.colour, nullptr) << info.name;
  }
  EXPECT_EQ(op_kind("no_such_op"), OpKind::count_);
  // Kinds are stored as numbers (ew_chain programs, perfmodel footprints): the old ones keep theirs.
  EXPECT_EQ(static_cast<int>(OpKind::matmul), 0);
  EXPECT_EQ(static_cast<int>(OpKind::phased_gate_grad), 40);
  EXPECT_STREQ(op_info(OpKind::sigmoid).colour, "#e15759");  // the Gantt colours of before the table
}

// The fast max pool takes rows in vector blocks of 16 outputs (a short row as one block reading into the next
// row, except where that would read past X); its rule must stay the reference's, bit for bit: the first tap,
// then max_pool_takes (`v > best` or v NaN), in row-major window order. Rows from 5 to 37 outputs, strides 1, 2 and 3, padding and ceil
// mode, on values with many ties (-0 and +0 among them) and a few NaNs. The gradients are small integers, so
// the reference's double sums and the fast kernel's float sums are exact and must match bitwise too.
TEST(MaxPoolFast, SameBitsAsTheReferenceOnBlocksTailsTiesAndNaN) {
  struct Case {
    int64_t n, c, h, w;
    PoolParams p;
  };
  const Case cases[] = {
      {2, 3, 28, 28, {3, 3, 2, 2, 0, 0, 0, 0, false, false}},    // CIFAR-quick: 13 outputs a row
      {1, 2, 34, 70, {2, 2, 2, 2, 0, 0, 0, 0, false, false}},    // 35 a row: two blocks and a tail
      {2, 2, 9, 40, {3, 3, 1, 1, 1, 1, 1, 1, false, false}},     // stride 1, padded edges
      {1, 3, 31, 50, {3, 3, 3, 3, 1, 1, 0, 2, true, false}},     // stride 3, asymmetric pads, ceil mode
      {3, 1, 11, 12, {3, 2, 2, 2, 1, 0, 1, 1, true, false}},     // 6 a row, the last plane's tail
      // Plane mode (short padded rows, GoogLeNet's inception and stem pools): blocks of whole planes.
      {2, 5, 8, 8, {3, 3, 1, 1, 1, 1, 1, 1, false, false}},      // 64 a plane: four blocks, one load a tap
      {1, 7, 7, 7, {3, 3, 1, 1, 1, 1, 1, 1, false, false}},      // 49 a plane: the last block part-filled
      {3, 5, 4, 4, {3, 3, 1, 1, 1, 1, 1, 1, false, false}},      // one block a plane
      {3, 5, 2, 2, {3, 3, 1, 1, 1, 1, 1, 1, false, false}},      // four planes a block, short last groups
      {2, 9, 8, 8, {3, 3, 2, 2, 1, 1, 1, 1, false, false}},      // stride 2, W = 2 OW: one strided load a tap
      {1, 3, 32, 32, {3, 3, 2, 2, 1, 1, 1, 1, false, false}},    // 16 a row, the first one padded
      {2, 3, 9, 9, {3, 3, 2, 2, 1, 1, 1, 1, false, false}},      // W = 2 OW - 1: one load a lane
      {1, 19, 2, 2, {3, 3, 2, 2, 1, 1, 1, 1, false, false}},     // 1x1 outputs: 16 planes a block
      {2, 3, 5, 6, {2, 3, 1, 2, 2, 1, 1, 2, true, false}},       // all-padding windows, 2x3 kernel, ceil
  };
  std::mt19937 rng(7);
  for (const Case& q : cases) {
    const PoolParams& p = q.p;
    const Shape xs{q.n, q.c, q.h, q.w};
    const Shape ys = testing::pooled_shape(xs, p);
    const std::string what = "case " + xs.str() + " -> " + ys.str();
    std::vector<float> x(static_cast<size_t>(xs.numel())), dy(static_cast<size_t>(ys.numel()));
    std::uniform_int_distribution<int> level(-3, 3), pick(0, 99), grad(1, 8);
    for (float& v : x) {
      const int k = pick(rng);
      v = k < 2 ? std::nanf("") : k < 12 ? -0.0f : static_cast<float>(level(rng)) * 0.25f;
    }
    for (float& v : dy) v = static_cast<float>(grad(rng));
    const auto [fwd, bwd] = testing::max_pool_calls(xs, ys, p);
    std::vector<float> y_ref(dy.size()), y_fast(dy.size()), dx_ref(x.size()), dx_fast(x.size());
    for (int width : {1, 3}) {
      for (int rank = 0; rank < width; ++rank) {
        float* r[] = {x.data(), y_ref.data()};
        float* f[] = {x.data(), y_fast.data()};
        op_info(OpKind::max_pool).ref(fwd, r, rank, width);
        op_info(OpKind::max_pool).fast(fwd, f, rank, width);
        float* rb[] = {x.data(), dy.data(), dx_ref.data()};
        float* fb[] = {x.data(), dy.data(), dx_fast.data()};
        op_info(OpKind::max_pool_grad).ref(bwd, rb, rank, width);
        op_info(OpKind::max_pool_grad).fast(bwd, fb, rank, width);
      }
      EXPECT_EQ(std::memcmp(y_ref.data(), y_fast.data(), y_ref.size() * sizeof(float)), 0) << what << " width " << width;
      EXPECT_EQ(std::memcmp(dx_ref.data(), dx_fast.data(), dx_ref.size() * sizeof(float)), 0) << what << " width " << width;
    }
  }
}

// A constant image makes every window a tie: both max_pool_grad kernels must send each window's gradient
// to its first position in row-major window order (the first max), at every width.
TEST(MaxPoolGrad, TiesGoToTheFirstMax) {
  OpCall call;
  call.kind = OpKind::max_pool_grad;
  call.shapes = {Shape{2, 3, 5, 5}, Shape{2, 3, 2, 2}, Shape{2, 3, 5, 5}};  // kernel 3, stride 2
  call.modes = {Access::read, Access::read, Access::write};
  call.i = {3, 2, 0, 0};
  std::vector<float> x(150, 0.5f), dy(24), dx(150);
  for (size_t e = 0; e < dy.size(); ++e) dy[e] = 1.0f + static_cast<float>(e);
  for (Kernel k : {op_info(OpKind::max_pool_grad).ref, op_info(OpKind::max_pool_grad).fast})
    for (int width : {1, 2, 4, 8}) {
      std::fill(dx.begin(), dx.end(), -1.0f);
      float* bufs[] = {x.data(), dy.data(), dx.data()};
      for (int rank = 0; rank < width; ++rank) k(call, bufs, rank, width);
      for (int p = 0; p < 6; ++p)
        for (int e = 0; e < 25; ++e) {
          const int oh = e / 5 / 2, ow = e % 5 / 2;  // windows start at rows/cols 0 and 2
          const bool first = e / 5 % 2 == 0 && e % 5 % 2 == 0 && e / 5 <= 2 && e % 5 <= 2;
          const float want = first ? dy[static_cast<size_t>(p * 4 + oh * 2 + ow)] : 0.0f;
          EXPECT_EQ(dx[static_cast<size_t>(p * 25 + e)], want) << "plane " << p << " element " << e << " width " << width;
        }
    }
}

TEST(KernelTableDeathTest, InvalidKindAborts) { EXPECT_DEATH(op_info(OpKind::count_), "invalid op kind"); }

TEST(SplitRange, PartitionsAlignedAndBalanced) {
  for (int64_t n : {0, 1, 15, 16, 17, 100, 1000, 4099})
    for (int width : {1, 2, 3, 4, 8, 16, 256})
      for (int64_t align : {1, 16}) {
        int64_t next = 0;
        for (int rank = 0; rank < width; ++rank) {
          const Range r = split_range(n, rank, width, align);
          ASSERT_EQ(r.begin, next) << n << " " << width << " " << align << " rank " << rank;
          ASSERT_LE(r.begin, r.end);
          ASSERT_TRUE(r.begin % align == 0 || r.begin == n);
          // Balanced: no member gets more than one alignment block above an even share.
          ASSERT_LE(r.size(), ((n + align - 1) / align + width - 1) / width * align);
          next = r.end;
        }
        ASSERT_EQ(next, n);
      }
}

}  // namespace
}  // namespace corun::codelets

namespace corun::codelets {
namespace {

// An index that is not a row of the table is a user error with a message, never a wild read.
TEST(EmbeddingIndices, BadIndexThrowsNamingItAndTheVocabulary) {
  OpCall call;
  call.kind = OpKind::embedding;
  call.shapes = {Shape{3}, Shape{4, 2}, Shape{3, 2}};
  call.modes = {Access::read, Access::read, Access::write};
  std::vector<float> table(8, 1.0f), y(6, 0.0f);
  for (const float bad : {4.0f, -1.0f, 1.5f, std::nanf("")}) {
    std::vector<float> idx = {0.0f, bad, 3.0f};
    float* bufs[] = {idx.data(), table.data(), y.data()};
    for (Kernel k : {op_info(OpKind::embedding).ref, op_info(OpKind::embedding).fast}) {
      try {
        k(call, bufs, 0, 1);
        ADD_FAILURE() << "index " << bad << " was accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("at position 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("[0, 4)"), std::string::npos) << e.what();
      }
    }
    call.kind = OpKind::embedding_grad;  // same buffers: idx, dY [3,2], dT [4,2]
    call.shapes = {Shape{3}, Shape{3, 2}, Shape{4, 2}};
    float* gbufs[] = {idx.data(), y.data(), table.data()};
    EXPECT_THROW(op_info(OpKind::embedding_grad).fast(call, gbufs, 0, 1), Error);
    call.kind = OpKind::embedding;
    call.shapes = {Shape{3}, Shape{4, 2}, Shape{3, 2}};
  }
}

}  // namespace
}  // namespace corun::codelets
