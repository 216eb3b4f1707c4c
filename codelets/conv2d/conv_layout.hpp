// Blocked channel layouts of the convolutions' activations (Graph::block_layouts; issue 18).
//
// oneDNN's direct convolution kernels work on activations in nChw16c (AVX-512) or nChw8c (AVX2): the
// channels in blocks of B, each block's B values of one position contiguous. On the graph's plain NCHW buffers
// every convolution reorders its input into that layout and its output back, inside the task (conv2d_dnnl.cpp):
// on ResNet-50 at batch 32 those reorders were 16 of the 126 ms its convolutions took, and in GoogLeNet's
// training about 37 of the 250 ms its oneDNN primitives took. Graph::block_layouts keeps a tensor blocked
// where every op that touches it can take it so: the blocked oneDNN convolution passes, max pooling, concat and
// split along the channels, and the per-element ops (relu, relu_grad, the adds that sum gradients, ...) whose
// operands are all blocked (a per-element op computes the same thing whatever the order of its elements).
// Reorders then happen only at the edges, inside the convolutions that read a plain tensor or write one.
//
// The layout travels in the call's attributes, i[14] the block of the activation on the convolution's input side
// (conv2d's X, conv2d_grad_data's dX, conv2d_grad_filter's X), i[15] on its output side (conv2d's Y, the
// gradients' dY): 0 plain NCHW, 8 or 16 nChw<B>c. A blocked tensor of C channels (C a multiple of B) has the same
// size as the plain one, and image n still starts at n*C*H*W; channels [k0, k0 + kt) of an image with k0 and kt
// multiples of B occupy the same contiguous range as in NCHW, so image chunks, channel tiles, filter tiles and the
// fused activation (ConvEpilogue) need no change. The oneDNN kernels hand the blocked buffers to oneDNN as they
// are; the other kernels (reference, im2col, direct depthwise) run on plain copies (conv2d_via_plain,
// conv2d_grad_filter_via_plain), so every kernel path takes every layout, and the bits never depend on it: the
// layout changes where bytes sit, not the arithmetic.
#pragma once

#include "codelets/blocked_layout.hpp"
#include "codelets/op.hpp"

namespace corun::codelets {

inline constexpr int kConvXBlockAttr = 14;
inline constexpr int kConvYBlockAttr = 15;

/// Whether calls of `kind` carry activation layouts: conv2d and its two gradients.
inline bool conv_takes_layouts(OpKind kind) {
  return kind == OpKind::conv2d || kind == OpKind::conv2d_grad_data || kind == OpKind::conv2d_grad_filter;
}

/// The layouts of a convolution call's input-side activation (X, or dX) and output-side one (Y, or dY): 0 for
/// plain NCHW, else the channel block B of nChw<B>c.
struct ConvLayouts {
  int64_t x_block = 0, y_block = 0;

  static ConvLayouts of(const OpCall& call) {
    if (!conv_takes_layouts(call.kind)) return {};
    return {call.i[kConvXBlockAttr], call.i[kConvYBlockAttr]};
  }
  static void set(std::array<int64_t, kMaxIntAttrs>& i, int64_t x_block, int64_t y_block) {
    i[kConvXBlockAttr] = x_block;
    i[kConvYBlockAttr] = y_block;
  }
  bool any() const { return x_block != 0 || y_block != 0; }
};

/// Runs `kernel`, a conv2d or conv2d_grad_data kernel of plain layouts, on this member's images of `call`, whose
/// input (X, or dY) or output (Y, or dX) is blocked: the member's images of the input are copied to plain NCHW
/// (when blocked), the kernel runs on them alone (rank 0, width 1, a call of that many images), and its plain
/// output is copied into the output's layout. Both passes treat every image alone in every kernel, so these are
/// the bits of the plain call. The copies live in buffers of the calling thread that only grow.
void conv2d_via_plain(Kernel kernel, const OpCall& call, float* const* buf, int rank, int width);

/// The same for a conv2d_grad_filter kernel, whose sum runs over every image: the member copies the whole X and
/// dY to plain NCHW (those that are blocked) and runs the kernel on them as this member of the team.
void conv2d_grad_filter_via_plain(Kernel kernel, const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
