// batch_norm and batch_norm_grad on X in oneDNN's blocked layout nChw<B>c (Graph::block_layouts, i[2]): block
// cb of image n is an [S][B] array, B channels side by side at every position, so one position of a block is
// one vector and every channel of the block is summed at once.
//
// The same bits as the NCHW kernels (batch_norm_fast.cpp): channel j's element at position s goes to lane
// s % kBatchNormLanes, each lane adds its elements in image order, then position order, and the lanes meet in
// batch_norm_lane_total's tree; the per-channel coefficients and the per-element formulas are the same
// expressions. Members take whole channel blocks.
#include "codelets/batch_norm/batch_norm_channel.hpp"
#include "codelets/simd_clones.hpp"

#include <algorithm>
#include <cmath>

namespace corun::codelets {
namespace {

constexpr int kLanes = kBatchNormLanes;

// The block's B channels' sums, lane by lane: sums[lane][j].
template <int64_t B>
struct BlockSums {
  double v[kLanes][B];

  BlockSums() {
    for (auto& lane : v) std::fill_n(lane, B, 0.0);
  }
  double total(int64_t j) const {
    double lane[kLanes];
    for (int l = 0; l < kLanes; ++l) lane[l] = v[l][j];
    return batch_norm_lane_total(lane);
  }
};

// f(lane, at) for every position of block cb of every image, `at` the index of its first channel: images in
// order, then positions.
template <int64_t B, typename F>
inline void for_positions(const BatchNormDims& d, int64_t cb, F f) {
  const int64_t blocks = d.c / B;
  for (int64_t n = 0; n < d.n; ++n) {
    const int64_t base = (n * blocks + cb) * d.s * B;
    for (int64_t s0 = 0; s0 < d.s; s0 += kLanes) {
      const int lanes = static_cast<int>(std::min<int64_t>(kLanes, d.s - s0));
      for (int l = 0; l < lanes; ++l) f(l, base + (s0 + l) * B);
    }
  }
}

template <int64_t B>
void forward_block(const OpCall& call, float* const* buf, const BatchNormDims& d, int64_t cb) {
  const float* x = buf[0];
  const bool training = call.i[0] != 0;
  const double m = batch_norm_momentum(call), eps = call.f, count = static_cast<double>(d.count());
  double mean[B], var[B];
  if (training) {
    BlockSums<B> sums;
    for_positions<B>(d, cb, [&](int l, int64_t at) {
      for (int64_t j = 0; j < B; ++j) sums.v[l][j] += x[at + j];
    });
    for (int64_t j = 0; j < B; ++j) mean[j] = sums.total(j) / count;
    BlockSums<B> sq;
    for_positions<B>(d, cb, [&](int l, int64_t at) {
      for (int64_t j = 0; j < B; ++j) {
        const double dev = x[at + j] - mean[j];
        sq.v[l][j] += dev * dev;
      }
    });
    for (int64_t j = 0; j < B; ++j) var[j] = batch_norm_update_running(buf, cb * B + j, m, mean[j], sq.total(j), count);
  } else {
    for (int64_t j = 0; j < B; ++j) {
      mean[j] = buf[3][cb * B + j];
      var[j] = buf[4][cb * B + j];
    }
  }
  float scale[B], shift[B];
  for (int64_t j = 0; j < B; ++j) {
    const BatchNormAffine a = batch_norm_affine(buf, cb * B + j, mean[j], var[j], eps);
    scale[j] = a.scale;
    shift[j] = a.shift;
  }
  float* __restrict y = buf[5];
  for_positions<B>(d, cb, [&](int, int64_t at) {
    for (int64_t j = 0; j < B; ++j) y[at + j] = x[at + j] * scale[j] + shift[j];
  });
}

template <int64_t B>
void backward_block(const OpCall& call, float* const* buf, const BatchNormDims& d, int64_t cb) {
  const bool training = call.i[0] != 0;
  const float *x = buf[0], *dy = buf[4];
  const double count = static_cast<double>(d.count());
  double mean[B];
  for (int64_t j = 0; j < B; ++j) mean[j] = buf[2][cb * B + j];
  BlockSums<B> sum_dy, sum_dyx;
  for_positions<B>(d, cb, [&](int l, int64_t at) {
    for (int64_t j = 0; j < B; ++j) {
      sum_dy.v[l][j] += dy[at + j];
      sum_dyx.v[l][j] += dy[at + j] * (x[at + j] - mean[j]);
    }
  });
  float kf[B], pf[B], qf[B];
  for (int64_t j = 0; j < B; ++j) {
    const BatchNormGradCoefficients g =
        batch_norm_grad_coefficients(buf, cb * B + j, training, mean[j], sum_dy.total(j), sum_dyx.total(j), count);
    kf[j] = g.k;
    pf[j] = g.p;
    qf[j] = g.q;
  }
  float* __restrict dx = buf[5];
  for_positions<B>(d, cb, [&](int, int64_t at) {
    for (int64_t j = 0; j < B; ++j) dx[at + j] = kf[j] * dy[at + j] + pf[j] * x[at + j] + qf[j];
  });
}

// block(cb) for the member's whole channel blocks.
template <typename Each>
void for_member_blocks(const BatchNormDims& d, int rank, int width, Each block) {
  const Range r = split_range(d.c / d.block, rank, width);
  for (int64_t cb = r.begin; cb < r.end; ++cb) block(cb);
}

}  // namespace

CORUN_SIMD_CLONES void batch_norm_blocked(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d = BatchNormDims::of(call);
  for_member_blocks(d, rank, width, [&](int64_t cb) {
    if (d.block == 16) forward_block<16>(call, buf, d, cb);
    else forward_block<8>(call, buf, d, cb);
  });
}

CORUN_SIMD_CLONES void batch_norm_grad_blocked(const OpCall& call, float* const* buf, int rank, int width) {
  const BatchNormDims d = BatchNormDims::of(call);
  for_member_blocks(d, rank, width, [&](int64_t cb) {
    if (d.block == 16) backward_block<16>(call, buf, d, cb);
    else backward_block<8>(call, buf, d, cb);
  });
}

}  // namespace corun::codelets
