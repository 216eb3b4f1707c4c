// conv2d_dnnl_cut.hpp has the why.
#include "codelets/conv2d/conv2d_dnnl_cut.hpp"

#include <algorithm>

namespace corun::codelets::dnnl_cut {

int64_t groups_per_unit(const ConvGeometry& g) {
  return g.groups == 1 ? 1 : std::max<int64_t>(1, kDnnlFilterTile / g.kg());
}

ConvGeometry tile_geometry(const ConvGeometry& g, const ChannelTile& t) {
  ConvGeometry tile = g;
  tile.k = t.kt;
  tile.c = t.ct;
  tile.groups = t.gt;
  return tile;
}

int64_t channel_units(const ConvGeometry& g, bool over_outputs) {
  if (g.groups > 1) return (g.groups + groups_per_unit(g) - 1) / groups_per_unit(g);
  return ((over_outputs ? g.k : g.c) + kDnnlChannelBlock - 1) / kDnnlChannelBlock;
}

TileCut tile_cut(const ConvGeometry& g, int64_t chunks, bool over_outputs) {
  const int64_t units = channel_units(g, over_outputs);
  // Only a batch of one chunk is cut into tiles: with several chunks, items are already there for a team, and
  // under a layout of single-core executors (cpf's default, the best policy in training on 16 cores) every
  // tile's extra primitive call and view reorders would be pure cost (1.1-2.3x one thread's time on
  // MobileNetV2's depthwise and 1x1 layers at batch 16 cut into 16 items).
  if (chunks > 1) return {units, units, 1};
  const int64_t wanted = std::min(units, conv_work_items());
  const int64_t per = (units + wanted - 1) / wanted;
  return {units, per, (units + per - 1) / per};
}

ChannelTile channel_tile(const ConvGeometry& g, const TileCut& cut, int64_t t, bool over_outputs) {
  const int64_t u0 = t * cut.units_per_tile, un = std::min(cut.units_per_tile, cut.units - u0);
  if (g.groups > 1) {
    const int64_t per = groups_per_unit(g), g0 = u0 * per, gt = std::min(un * per, g.groups - g0);
    return {g0 * g.kg(), gt * g.kg(), g0 * g.cg(), gt * g.cg(), gt};
  }
  const int64_t total = over_outputs ? g.k : g.c, first = u0 * kDnnlChannelBlock;
  const int64_t count = std::min(un * kDnnlChannelBlock, total - first);
  if (over_outputs) return {first, count, 0, g.c, 1};
  return {0, g.k, first, count, 1};
}

int64_t filter_tiles(const ConvGeometry& g) {
  if (g.groups == 1) return (g.k + kDnnlFilterTile - 1) / kDnnlFilterTile;
  const int64_t per = groups_per_unit(g);
  return (g.groups + per - 1) / per;
}

FilterTile filter_tile(const ConvGeometry& g, int64_t t) {
  if (g.groups == 1) {
    const int64_t k0 = t * kDnnlFilterTile;
    return {k0, std::min(kDnnlFilterTile, g.k - k0), 0, g.c, 1};
  }
  const int64_t per = groups_per_unit(g), g0 = t * per, gt = std::min(per, g.groups - g0);
  return {g0 * g.kg(), gt * g.kg(), g0 * g.cg(), gt * g.cg(), gt};
}

int64_t image_chunks(int64_t n) { return (n + kDnnlImageChunk - 1) / kDnnlImageChunk; }

Item item_of(const ConvGeometry& g, const TileCut& cut, int64_t i, bool over_outputs) {
  const int64_t chunks = image_chunks(g.n), j = i % chunks, n0 = j * kDnnlImageChunk;
  return {n0, std::min(kDnnlImageChunk, g.n - n0), channel_tile(g, cut, i / chunks, over_outputs)};
}

}  // namespace corun::codelets::dnnl_cut
