// Fast batch_norm and batch_norm_grad: per channel, the sums run with double accumulators (the count is
// N * H * W, up to millions, where float sums lose digits), then one multiply-add per element with
// per-channel coefficients computed once.
//
// Lanes. Each channel's sums are spread over kLanes accumulators, position s of every row on lane s % kLanes,
// and the lanes meet in a fixed tree at the end. With a single double accumulator every sum was one chain of
// dependent adds (about 4 cycles an element) and ResNet-50's 53 batch norms took 12% of its training step's
// work. The order of the additions depends on the shape only, never on the team width or on the blocking
// below, and the kernels are compiled for the CPU's vector width (CORUN_SIMD_CLONES) with the same bits on
// every copy.
//
// Blocks. Channels go in blocks that fit in cache, image by image across the block: a channel's rows lie
// C * H * W floats apart, a power-of-two stride on most networks, so walking one channel of small maps at a
// time hit the same cache set on every row. Rows shorter than kLanes (the 2x2 and 1x1 maps of a deep
// network, a 2-D X) make each image's part of a block one contiguous span, whose element o (channel o / S,
// position o % S) has an accumulator of its own: one vectorised loop over the span, on the lanes above.
#include "codelets/batch_norm/batch_norm_channel.hpp"
#include "codelets/simd_clones.hpp"

#include <algorithm>
#include <cmath>

namespace corun::codelets {
namespace {

constexpr int kLanes = kBatchNormLanes;
constexpr int64_t kMaxBlock = 64;            // channels per block, at most
constexpr int64_t kBlockFloats = 32 * 1024;  // a block's elements, at most (128 KiB), unless one channel is more
constexpr int64_t kSlots = kMaxBlock * kLanes;

// Channels [c0, c1) of X viewed as [N, C, S], at most kMaxBlock of them.
struct Block {
  const BatchNormDims& d;
  int64_t c0, c1;

  int size() const { return static_cast<int>(c1 - c0); }
  bool short_rows() const { return d.s < kLanes; }
  // Accumulators per channel: its kLanes lanes, or one per position of a short row.
  int64_t per_channel() const { return short_rows() ? d.s : kLanes; }
  int64_t slots() const { return size() * per_channel(); }

  // f(slot, p, at) for every element of the block, `at` its index in X, images in order, then channels, then
  // positions. `slot` is its accumulator: channel * kLanes + lane for long rows, the element's place in its
  // image's span for short rows. `p` indexes the per-channel parameters: the channel for long rows, the slot
  // for short ones (parameters expanded to one per slot by expand()).
  template <typename F>
  void for_each(F f) const {
    for (int64_t n = 0; n < d.n; ++n) {
      if (short_rows()) {
        const int64_t base = (n * d.c + c0) * d.s, len = slots();
        for (int64_t o = 0; o < len; ++o) f(o, o, base + o);
        continue;
      }
      for (int i = 0; i < size(); ++i) {
        const int64_t row = (n * d.c + c0 + i) * d.s;
        int64_t s = 0;
        for (; s + kLanes <= d.s; s += kLanes)
          for (int j = 0; j < kLanes; ++j) f(i * kLanes + j, i, row + s + j);
        for (int j = 0; s + j < d.s; ++j) f(i * kLanes + j, i, row + s + j);
      }
    }
  }

  // Per-channel values as for_each's `p` indexes them.
  template <typename T>
  void expand(const T* channel, T* p) const {
    const int64_t per = short_rows() ? d.s : 1;  // a short row's slots, or a long row's channel
    for (int64_t o = 0; o < size() * per; ++o) p[o] = channel[o / per];
  }

  // Channel i's sum: its accumulators on their lanes, then the fixed tree.
  double total(const double* sums, int i) const {
    double lane[kLanes] = {};
    const int per = static_cast<int>(per_channel());
    for (int j = 0; j < per; ++j) lane[j] = sums[i * per + j];
    return batch_norm_lane_total(lane);
  }
};

int64_t block_channels(const BatchNormDims& d) {
  return std::clamp<int64_t>(kBlockFloats / std::max<int64_t>(1, d.count()), 1, kMaxBlock);
}

// The forward of one block: statistics (training) or the running ones, then Y.
void forward_block(const OpCall& call, float* const* buf, const Block& b) {
  const float* x = buf[0];
  const bool training = call.i[0] != 0;
  const double m = batch_norm_momentum(call), eps = call.f, count = static_cast<double>(b.d.count());
  double mean[kMaxBlock], var[kMaxBlock];
  if (training) {
    // Two passes: the mean, then the squared deviations from it.
    double sums[kSlots], mean_p[kSlots];
    std::fill_n(sums, b.slots(), 0.0);
    b.for_each([&](int64_t slot, int64_t, int64_t at) { sums[slot] += x[at]; });
    for (int i = 0; i < b.size(); ++i) mean[i] = b.total(sums, i) / count;
    b.expand(mean, mean_p);
    std::fill_n(sums, b.slots(), 0.0);
    b.for_each([&](int64_t slot, int64_t p, int64_t at) {
      const double dev = x[at] - mean_p[p];
      sums[slot] += dev * dev;
    });
    for (int i = 0; i < b.size(); ++i)
      var[i] = batch_norm_update_running(buf, b.c0 + i, m, mean[i], b.total(sums, i), count);
  } else {
    for (int i = 0; i < b.size(); ++i) {
      mean[i] = buf[3][b.c0 + i];
      var[i] = buf[4][b.c0 + i];
    }
  }
  float scale[kMaxBlock], shift[kMaxBlock], scale_p[kSlots], shift_p[kSlots];
  for (int i = 0; i < b.size(); ++i) {
    const BatchNormAffine a = batch_norm_affine(buf, b.c0 + i, mean[i], var[i], eps);
    scale[i] = a.scale;
    shift[i] = a.shift;
  }
  b.expand(scale, scale_p);
  b.expand(shift, shift_p);
  float* __restrict y = buf[5];
  b.for_each([&](int64_t, int64_t p, int64_t at) { y[at] = x[at] * scale_p[p] + shift_p[p]; });
}

// The gradient of one block: dscale, dbias, then dX.
void backward_block(const OpCall& call, float* const* buf, const Block& b) {
  const bool training = call.i[0] != 0;
  const float *x = buf[0], *dy = buf[4];
  const double count = static_cast<double>(b.d.count());
  // sum dY and sum dY (X - mean); xhat's invstd applied once below
  double sum_dy[kSlots], sum_dyx[kSlots], mean[kMaxBlock], mean_p[kSlots];
  std::fill_n(sum_dy, b.slots(), 0.0);
  std::fill_n(sum_dyx, b.slots(), 0.0);
  for (int i = 0; i < b.size(); ++i) mean[i] = buf[2][b.c0 + i];
  b.expand(mean, mean_p);
  b.for_each([&](int64_t slot, int64_t p, int64_t at) {
    sum_dy[slot] += dy[at];
    sum_dyx[slot] += dy[at] * (x[at] - mean_p[p]);
  });
  float kf[kMaxBlock], pf[kMaxBlock], qf[kMaxBlock], k_p[kSlots], p_p[kSlots], q_p[kSlots];
  for (int i = 0; i < b.size(); ++i) {
    const BatchNormGradCoefficients g =
        batch_norm_grad_coefficients(buf, b.c0 + i, training, mean[i], b.total(sum_dy, i), b.total(sum_dyx, i), count);
    kf[i] = g.k;
    pf[i] = g.p;
    qf[i] = g.q;
  }
  b.expand(kf, k_p);
  b.expand(pf, p_p);
  b.expand(qf, q_p);
  float* __restrict dx = buf[5];
  b.for_each([&](int64_t, int64_t p, int64_t at) { dx[at] = k_p[p] * dy[at] + p_p[p] * x[at] + q_p[p]; });
}

// block(b) for each block of the member's channels.
template <typename Each>
void for_blocks(const BatchNormDims& d, int rank, int width, Each block) {
  const Range r = split_range(d.c, rank, width);
  const int64_t per = block_channels(d);
  for (int64_t c0 = r.begin; c0 < r.end; c0 += per) block(Block{d, c0, std::min(r.end, c0 + per)});
}

}  // namespace

CORUN_SIMD_CLONES void batch_norm_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d = BatchNormDims::of(call);
  if (d.block != 0) return batch_norm_blocked(call, buf, rank, width);
  for_blocks(d, rank, width, [&](const Block& b) { forward_block(call, buf, b); });
}

CORUN_SIMD_CLONES void batch_norm_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d = BatchNormDims::of(call);
  if (d.block != 0) return batch_norm_grad_blocked(call, buf, rank, width);
  for_blocks(d, rank, width, [&](const Block& b) { backward_block(call, buf, b); });
}

}  // namespace corun::codelets
