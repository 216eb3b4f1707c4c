// Max pooling and NaN (issue 52 item 1): every max pool kernel (reference, fast row and plane modes, blocked
// nChw16c and nChw8c) against PyTorch's CPU loop, written out here as the oracle: maxval starts at -inf and tap
// `val` replaces it when `val > maxval || isnan(val)`, in row-major window order. So a window holding NaN gives
// its last NaN, payload included, and the gradient goes to that NaN. The NaNs carry distinct payloads so that
// taking another NaN of the window shows; dY are small integers, so every kernel's sums are exact.
#include "codelets/blocked_layout.hpp"
#include "codelets/op.hpp"
#include "codelets/pool/pool.hpp"
#include "max_pool_calls.hpp"
#include "tests/common/float_bits.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace corun::codelets {
namespace {

struct NanCase {
  const char* what;
  int64_t n, c, h, w;
  PoolParams p;
  double nan_share;  // of the elements of X's planes that hold NaN: every third plane holds none
};

using ::corun::testing::nan_with_payload;
using ::corun::testing::to_bits;

// PyTorch's max_pool2d on the CPU (aten/src/ATen/native/cpu/MaxPoolKernel.cpp), plane by plane: Y and dX.
void oracle(const NanCase& q, const Shape& ys, const std::vector<float>& x, const std::vector<float>& dy,
            std::vector<float>& y, std::vector<float>& dx) {
  const PoolParams& p = q.p;
  y.assign(dy.size(), 0.0f);
  dx.assign(x.size(), 0.0f);
  for (int64_t plane = 0; plane < q.n * q.c; ++plane)
    for (int64_t oh = 0; oh < ys[2]; ++oh)
      for (int64_t ow = 0; ow < ys[3]; ++ow) {
        float maxval = -std::numeric_limits<float>::infinity();
        int64_t at = -1;
        for (int64_t ih = oh * p.stride_h - p.pad_top; ih < oh * p.stride_h - p.pad_top + p.kernel_h; ++ih)
          for (int64_t iw = ow * p.stride_w - p.pad_left; iw < ow * p.stride_w - p.pad_left + p.kernel_w; ++iw) {
            if (ih < 0 || ih >= q.h || iw < 0 || iw >= q.w) continue;
            const int64_t e = (plane * q.h + ih) * q.w + iw;
            if (at < 0) at = e;  // PyTorch's maxindex starts at the first tap inside
            if (x[e] > maxval || std::isnan(x[e])) {
              maxval = x[e];
              at = e;
            }
          }
        const int64_t o = (plane * ys[2] + oh) * ys[3] + ow;
        if (at < 0) continue;  // all padding: 0 in corun (PyTorch refuses such a window)
        y[o] = x[at];
        dx[at] += dy[o];
      }
}

// Runs `kernel` at every rank of `width` on the plain buffers, through the blocked layout when block > 0.
void run(Kernel kernel, OpCall call, int64_t block, std::vector<std::vector<float>>& bufs, int width) {
  std::vector<std::vector<float>> mine = bufs;
  if (block > 0) {
    call.i[kPoolBlockAttr] = block;
    for (size_t b = 0; b < bufs.size(); ++b) {
      const Shape& s = call.shapes[b];
      to_blocked(bufs[b].data(), mine[b].data(), s[0], s[1], s[2] * s[3], block);
    }
  }
  std::vector<float*> ptrs;
  for (auto& v : mine) ptrs.push_back(v.data());
  for (int rank = 0; rank < width; ++rank) kernel(call, ptrs.data(), rank, width);
  if (block > 0) {
    const size_t out = bufs.size() - 1;
    const Shape& s = call.shapes[out];
    to_plain(mine[out].data(), bufs[out].data(), s[0], s[1], s[2] * s[3], block);
  } else {
    bufs.back() = mine.back();
  }
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  int reported = 0;
  for (size_t e = 0; e < want.size() && reported < 3; ++e)
    if (to_bits(got[e]) != to_bits(want[e])) {
      ADD_FAILURE() << what << " element " << e << ": got " << got[e] << " (0x" << std::hex << to_bits(got[e])
                    << "), want " << want[e] << " (0x" << to_bits(want[e]) << std::dec << ")";
      ++reported;
    }
}

void check(const NanCase& q) {
  const PoolParams& p = q.p;
  const Shape xs{q.n, q.c, q.h, q.w};
  const Shape ys = testing::pooled_shape(xs, p);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> level(-3, 3), grad(1, 8);
  std::vector<float> x(static_cast<size_t>(xs.numel())), dy(static_cast<size_t>(ys.numel()));
  uint32_t payload = 1;
  for (size_t e = 0; e < x.size(); ++e) {
    const bool clean_plane = e / static_cast<size_t>(q.h * q.w) % 3 == 1;  // the kernels check plane by plane
    x[e] = !clean_plane && u(rng) < q.nan_share ? nan_with_payload(payload++) : static_cast<float>(level(rng)) * 0.25f;
  }
  for (float& v : dy) v = static_cast<float>(grad(rng));
  std::vector<float> y_want, dx_want;
  oracle(q, ys, x, dy, y_want, dx_want);
  const auto [fwd, bwd] = testing::max_pool_calls(xs, ys, p);
  for (int64_t block : {0, 8, 16}) {
    if (block > 0 && q.c % block != 0) continue;
    for (const auto& [name, fk, bk] : {std::tuple{"ref", op_info(OpKind::max_pool).ref, op_info(OpKind::max_pool_grad).ref},
                                       std::tuple{"fast", op_info(OpKind::max_pool).fast, op_info(OpKind::max_pool_grad).fast}})
      for (int width : {1, 3}) {
        const std::string what = std::string(q.what) + ", " + name + " kernel, block " + std::to_string(block) +
                                 ", width " + std::to_string(width);
        std::vector<std::vector<float>> f{x, std::vector<float>(y_want.size())};
        run(fk, fwd, block, f, width);
        expect_same_bits(f[1], y_want, what + ", Y");
        std::vector<std::vector<float>> b{x, dy, std::vector<float>(x.size())};
        run(bk, bwd, block, b, width);
        expect_same_bits(b[2], dx_want, what + ", dX");
      }
  }
}

TEST(MaxPoolNan, AnyTapGivesNanAndTakesTheGradientAsPyTorch) {
  const NanCase cases[] = {
      // PathNet's pools (2x2 / 2), rows of 16 outputs: the row mode's interior blocks.
      {"2x2/2 on 32x32", 2, 16, 32, 32, {2, 2, 2, 2, 0, 0, 0, 0, false, false}, 0.03},
      // CIFAR-quick's first pool: 13 outputs a row, one block reading into the next row.
      {"3x3/2 on 28x28", 1, 16, 28, 28, {3, 3, 2, 2, 0, 0, 0, 0, false, false}, 0.05},
      // Padded edges (the row mode's masked blocks), stride 1: windows overlapping, several NaNs each.
      {"3x3/1 pad 1 on 9x40", 2, 8, 9, 40, {3, 3, 1, 1, 1, 1, 1, 1, false, false}, 0.1},
      // GoogLeNet's inception and stem pools: plane mode, one load a tap and one load a lane.
      {"3x3/1 pad 1 on 8x8", 2, 16, 8, 8, {3, 3, 1, 1, 1, 1, 1, 1, false, false}, 0.05},
      {"3x3/2 pad 1 on 9x9", 2, 8, 9, 9, {3, 3, 2, 2, 1, 1, 1, 1, false, false}, 0.05},
      {"3x3/1 pad 1 on 2x2", 3, 16, 2, 2, {3, 3, 1, 1, 1, 1, 1, 1, false, false}, 0.2},
      // Stride 3, asymmetric pads, ceil mode; all-padding windows.
      {"3x3/3 ceil on 31x50", 1, 8, 31, 50, {3, 3, 3, 3, 1, 1, 0, 2, true, false}, 0.05},
      {"2x3 ceil on 5x6", 2, 8, 5, 6, {2, 3, 1, 2, 2, 1, 1, 2, true, false}, 0.1},
      // No NaN at all: the kernels' path without the NaN test.
      {"2x2/2 on 16x16, no NaN", 2, 16, 16, 16, {2, 2, 2, 2, 0, 0, 0, 0, false, false}, 0.0},
  };
  for (const NanCase& q : cases) {
    SCOPED_TRACE(q.what);
    check(q);
  }
}

// One NaN, at each tap of window (1, 5) of plane 1 in turn, among NaN-free planes: that window gives NaN and
// every other output its plain maximum, in every kernel (a first tap's NaN stayed before, a later one did not).
TEST(MaxPoolNan, EachTapPositionOfAWindow) {
  const NanCase q{"2x3 window, stride 2x3", 1, 16, 6, 35, {2, 3, 2, 3, 0, 0, 0, 0, false, false}, 0.0};
  for (int64_t tap = 0; tap < 6; ++tap) {
    SCOPED_TRACE("tap " + std::to_string(tap));
    const PoolParams& p = q.p;
    const Shape xs{q.n, q.c, q.h, q.w};
    const Shape ys{q.n, q.c, testing::pooled_extent(q.h, p.kernel_h, p.stride_h, 0, 0, false),
                   testing::pooled_extent(q.w, p.kernel_w, p.stride_w, 0, 0, false)};
    std::vector<float> x(static_cast<size_t>(xs.numel())), dy(static_cast<size_t>(ys.numel()), 1.0f);
    for (size_t e = 0; e < x.size(); ++e) x[e] = static_cast<float>(e % 7) - 3.0f;
    const int64_t ih = 1 * p.stride_h + tap / p.kernel_w, iw = 5 * p.stride_w + tap % p.kernel_w;
    x[static_cast<size_t>((1 * q.h + ih) * q.w + iw)] = nan_with_payload(77);
    std::vector<float> y_want, dx_want;
    oracle(q, ys, x, dy, y_want, dx_want);
    ASSERT_TRUE(std::isnan(y_want[static_cast<size_t>((1 * ys[2] + 1) * ys[3] + 5)]));
    const OpCall fwd = testing::max_pool_calls(xs, ys, p).first;
    for (int64_t block : {0, 16})
      for (Kernel k : {op_info(OpKind::max_pool).ref, op_info(OpKind::max_pool).fast}) {
        std::vector<std::vector<float>> f{x, std::vector<float>(y_want.size())};
        run(k, fwd, block, f, 2);
        expect_same_bits(f[1], y_want, "block " + std::to_string(block));
      }
  }
}

}  // namespace
}  // namespace corun::codelets
