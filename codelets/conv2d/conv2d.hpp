// conv2d: 2-D convolution over NCHW tensors (cross-correlation, as every DL framework defines it), with a
// per-output-channel bias. The same stride and zero padding apply to both spatial dimensions.
//
//   conv2d              buffers X [N,C,H,W], W [K,C,R,S], B [K] -> Y [N,K,OH,OW]     i[0] stride, i[1] pad
//   conv2d_grad_data    buffers dY [N,K,OH,OW], W [K,C,R,S] -> dX [N,C,H,W]           i[0] stride, i[1] pad
//   conv2d_grad_filter  buffers X [N,C,H,W], dY [N,K,OH,OW] -> dW [K,C,R,S], dB [K]  i[0] stride, i[1] pad
//
// with OH = (H + 2 pad - R) / stride + 1 (floor), likewise OW, and
//   Y[n,k,oh,ow] = B[k] + sum_{c,r,s} W[k,c,r,s] X[n, c, oh*stride - pad + r, ow*stride - pad + s]
// (X outside the image is zero). Forward and backward-data split the batch (whole images per member);
// backward-filter sums over the batch, so it splits output channels instead: every member computes whole
// dW[k] and dB[k] rows and the sum over images runs in one fixed order at every width.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void conv2d_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_fast(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_data_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_data_fast(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_filter_ref(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_filter_fast(const OpCall& call, float* const* buf, int rank, int width);

/// Output extent of a convolution or pooling window sweep: (in + 2 pad - window) / stride + 1, or 0 when the
/// window does not fit.
inline int64_t window_out_extent(int64_t in, int64_t window, int64_t stride, int64_t pad) {
  const int64_t span = in + 2 * pad - window;
  return span < 0 ? 0 : span / stride + 1;
}

/// Output channels per backward-filter tile: the fast kernel's split unit, fixed so that every tile is
/// the same sgemm call at every team width.
inline constexpr int64_t kConvFilterTile = 8;

}  // namespace corun::codelets
