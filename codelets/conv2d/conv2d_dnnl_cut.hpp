// How the oneDNN convolution kernels (conv2d_dnnl.cpp) cut one call into work items: image chunks and
// channel tiles for forward and backward-data, filter tiles for backward-weights. Plain arithmetic on the
// shape (and the process-wide conv_work_items()), never on the team width, so that every item is the same
// primitive call at every width: conv2d_dnnl.hpp has the scheme.
#pragma once

#include "codelets/conv2d/conv2d_dnnl.hpp"

#include <cstdint>

namespace corun::codelets::dnnl_cut {

/// Whole groups per 16 output channels (at least one): the grouped unit of every channel cut.
int64_t groups_per_unit(const ConvGeometry& g);

/// A slice of the channels one forward or backward-data primitive call computes: output channels [k0, k0 + kt)
/// from input channels [c0, c0 + ct), gt groups of the convolution.
struct ChannelTile {
  int64_t k0, kt, c0, ct, gt;
};

/// The geometry of a tile's own convolution (its channels and groups; extents and window unchanged).
ConvGeometry tile_geometry(const ConvGeometry& g, const ChannelTile& t);

/// The cut of a forward (`over_outputs`) or backward-data call into chunk x tile work items. A unit is one
/// block of kDnnlChannelBlock output (forward) or input (backward-data) channels, or, with groups, enough whole
/// groups for kDnnlFilterTile output channels (at least one). A call is cut into enough tiles of whole units
/// for conv_work_items() items when the batch is one image chunk (at most kDnnlImageChunk images), so that a
/// small batch still feeds a wide team (an image-only cut left every member but one idle at batch 1: corun's
/// batch-1 inference was 0.16-0.77x PyTorch's on 16 cores).
struct TileCut {
  int64_t units, units_per_tile, tiles;
};

int64_t channel_units(const ConvGeometry& g, bool over_outputs);
TileCut tile_cut(const ConvGeometry& g, int64_t chunks, bool over_outputs);
/// Tile `t` of `cut`.
ChannelTile channel_tile(const ConvGeometry& g, const TileCut& cut, int64_t t, bool over_outputs);

/// A backward-weights tile: whole groups [g0, g0 + gt), i.e. output channels [k0, k0 + kt) and input channels
/// [c0, c0 + ct). One group (groups == 1): kDnnlFilterTile output channels, every input channel. Several:
/// enough whole groups for kDnnlFilterTile output channels (at least one), so a depthwise tile is 16 channels
/// of X, dY and dW, one nChw16c block.
struct FilterTile {
  int64_t k0, kt, c0, ct, gt;
};

int64_t filter_tiles(const ConvGeometry& g);
FilterTile filter_tile(const ConvGeometry& g, int64_t t);

/// Chunks of kDnnlImageChunk images in a batch of n.
int64_t image_chunks(int64_t n);

/// One work item of a forward or backward-data call: chunk j = images [n0, n0 + mb), and a channel tile.
/// Items are numbered tile-major (item i = tile i / chunks, chunk i % chunks), so that a member's consecutive
/// items share their filters, reordered once.
struct Item {
  int64_t n0, mb;
  ChannelTile tile;
};

Item item_of(const ConvGeometry& g, const TileCut& cut, int64_t i, bool over_outputs);

}  // namespace corun::codelets::dnnl_cut
