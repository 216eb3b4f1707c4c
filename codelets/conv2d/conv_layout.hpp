// Blocked channel layouts of conv2d's activations (Graph::block_layouts, inference graphs; issue 18).
//
// oneDNN's direct convolution kernels work on activations in nChw16c (AVX-512) or nChw8c (AVX2): the
// channels in blocks of B, each block's B values of one position contiguous. On the graph's plain NCHW buffers
// every convolution reorders its input into that layout and its output back, inside the task (conv2d_dnnl.cpp):
// on ResNet-50 at batch 32 those reorders were 16 of the 126 ms its convolutions took. Graph::block_layouts
// keeps a tensor blocked where every op that touches it can take it so: the blocked oneDNN convolutions, and the
// per-element ops (relu, add of two equal shapes, ...) whose operands are all blocked (a per-element op computes
// the same thing whatever the order of its elements). Reorders then happen only at the edges, inside the
// convolutions that read a plain tensor or write one.
//
// The layout travels in the conv2d call's attributes: i[14] is X's block (0: plain NCHW, 8 or 16: nChw<B>c),
// i[15] Y's. A blocked tensor of C channels (C a multiple of B) has the same size as the plain one, and image n
// still starts at n*C*H*W; channels [k0, k0 + kt) of an image with k0 and kt multiples of B occupy the same
// contiguous range as in NCHW, so image chunks, channel tiles and the fused activation (ConvEpilogue) need no
// change. The oneDNN kernels hand the blocked buffers to oneDNN as they are; the other kernels (reference,
// im2col, direct depthwise) run on plain copies of a member's images (conv2d_via_plain), so every kernel path
// takes every layout, and the bits never depend on it: the layout changes where bytes sit, not the arithmetic.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

inline constexpr int kConvXBlockAttr = 14;
inline constexpr int kConvYBlockAttr = 15;

/// The layouts of a conv2d call's X and Y: 0 for plain NCHW, else the channel block B of nChw<B>c.
struct ConvLayouts {
  int64_t x_block = 0, y_block = 0;

  static ConvLayouts of(const OpCall& call) {
    if (call.kind != OpKind::conv2d) return {};
    return {call.i[kConvXBlockAttr], call.i[kConvYBlockAttr]};
  }
  static void set(std::array<int64_t, kMaxIntAttrs>& i, int64_t x_block, int64_t y_block) {
    i[kConvXBlockAttr] = x_block;
    i[kConvYBlockAttr] = y_block;
  }
  bool any() const { return x_block != 0 || y_block != 0; }
};

/// blocked = plain in nChw<block>c, for `images` images of `channels` channels (a multiple of `block`) and
/// `plane` positions each.
void to_blocked(const float* plain, float* blocked, int64_t images, int64_t channels, int64_t plane, int64_t block);
/// The inverse: plain NCHW from nChw<block>c.
void to_plain(const float* blocked, float* plain, int64_t images, int64_t channels, int64_t plane, int64_t block);

/// Runs `kernel`, a conv2d kernel of plain layouts, on this member's images of `call`, whose X or Y is blocked:
/// the member's images of X are copied to plain NCHW (when X is blocked), the kernel runs on them alone (rank 0,
/// width 1, a call of that many images), and its plain output is copied into Y's layout. Forward convolution
/// treats every image alone in every kernel, so these are the bits of the plain call. The copies live in
/// buffers of the calling thread that only grow.
void conv2d_via_plain(Kernel kernel, const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
