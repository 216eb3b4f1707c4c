// batch_norm: ONNX BatchNormalization (opset 15) / PyTorch BatchNorm1d/2d over X [N, C, ...] (rank 2-4).
//   Buffers: X (R), scale (R, [C]), bias (R, [C]), running_mean (R or RW, [C]), running_var (R or RW, [C]),
//            Y (W, X's shape), mean (W, [C]), invstd (W, [C]).
//   i[0]: 1 training, 0 inference. i[1]: momentum's float bits (batch_norm_encode). f: epsilon.
//   Inference: mean = running_mean, invstd = 1 / sqrt(running_var + eps).
//   Training:  mean and the biased variance var over the N * spatial values of each channel, invstd =
//              1 / sqrt(var + eps); running_mean = m running_mean + (1 - m) mean and running_var = m
//              running_var + (1 - m) var * M / (M - 1) (unbiased, as PyTorch), M = N * spatial (ONNX's
//              momentum m; PyTorch's momentum is 1 - m). Both buffers are then readwrite.
//   Y = scale * (X - mean) * invstd + bias. mean and invstd are what the gradient needs.
// batch_norm_grad: buffers X, scale, mean, invstd, dY (R) -> dX (W), dscale (W, [C]), dbias (W, [C]);
//   i[0] as the forward. dbias = sum dY, dscale = sum dY xhat (xhat = (X - mean) invstd); training:
//   dX = scale invstd (dY - dbias / M - xhat dscale / M) (the batch statistics' gradient); inference:
//   dX = scale invstd dY.
// Both split the channels over the team: a channel's reduction over N * spatial stays whole inside one
// member, so the bits do not depend on the width.
// i[2]: the channel block of X, Y, dY and dX in a rank-4 call (0 plain NCHW, else oneDNN's nChw<B>c;
// Graph::block_layouts); the per-channel buffers are [C] in every layout. The fast kernels add each channel's
// values on the same lanes in the same order in both layouts (batch_norm_fast.cpp), so the bits are the same.
#pragma once

#include "codelets/op.hpp"

#include <cstring>

namespace corun::codelets {

void batch_norm_ref(const OpCall& call, float* const* buf, int rank, int width);
void batch_norm_fast(const OpCall& call, float* const* buf, int rank, int width);
void batch_norm_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void batch_norm_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

inline int64_t batch_norm_encode(float momentum) {
  uint32_t bits;
  std::memcpy(&bits, &momentum, sizeof bits);
  return static_cast<int64_t>(bits);
}

inline float batch_norm_momentum(const OpCall& call) {
  const auto bits = static_cast<uint32_t>(call.i[1]);
  float m;
  std::memcpy(&m, &bits, sizeof m);
  return m;
}

inline constexpr int kBatchNormBlockAttr = 2;

/// X viewed as [N, C, S]: S is the product of the spatial extents (1 for a 2-D X); `block` its layout's
/// channel block (i[2]).
struct BatchNormDims {
  int64_t n, c, s, block;
  explicit BatchNormDims(const Shape& x, int64_t channel_block = 0)
      : n(x[0]), c(x[1]), s(x.numel() / (x[0] * x[1])), block(channel_block) {}
  static BatchNormDims of(const OpCall& call) { return BatchNormDims(call.shapes[0], call.i[kBatchNormBlockAttr]); }
  int64_t count() const { return n * s; }  ///< values per channel
  /// The index of element s of channel c in image n: NCHW, or nChw<block>c.
  int64_t at(int64_t image, int64_t channel, int64_t pos) const {
    if (block == 0) return (image * c + channel) * s + pos;
    return ((image * (c / block) + channel / block) * s + pos) * block + channel % block;
  }
};

/// The lanes of the fast kernels' sums (batch_norm_fast.cpp): element s of a channel's row goes to lane
/// s % kBatchNormLanes, and the lanes meet in this fixed tree.
inline constexpr int kBatchNormLanes = 16;
inline double batch_norm_lane_total(double (&lane)[kBatchNormLanes]) {
  for (int half = kBatchNormLanes / 2; half > 0; half /= 2)
    for (int j = 0; j < half; ++j) lane[j] += lane[j + half];
  return lane[0];
}

/// The fast kernels on blocked X (i[2] != 0; batch_norm_blocked.cpp).
void batch_norm_blocked(const OpCall& call, float* const* buf, int rank, int width);
void batch_norm_grad_blocked(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
