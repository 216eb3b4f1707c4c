#include "codelets/work_items.hpp"

#include "codelets/batch_norm/batch_norm.hpp"
#include "codelets/conv2d/conv2d_dnnl_cut.hpp"
#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/matmul/matmul.hpp"
#include "codelets/pool/pool.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

// conv2d_dnnl.cpp's cut (image chunks x channel tiles, or filter tiles), else conv2d_fast.cpp's (whole images,
// or filter tiles of kConvFilterTile channels that never straddle a group).
int64_t conv_items(const OpCall& call, const ConvGeometry& g) {
  const bool forward = call.kind == OpKind::conv2d, data = call.kind == OpKind::conv2d_grad_data;
  if (is_onednn(conv_impl_of(call))) {
    if (!forward && !data) return dnnl_cut::filter_tiles(g);
    const int64_t chunks = dnnl_cut::image_chunks(g.n);
    return chunks * dnnl_cut::tile_cut(g, chunks, forward).tiles;
  }
  if (forward || data) return g.n;
  return g.groups * ((g.kg() + kConvFilterTile - 1) / kConvFilterTile);
}

// The pools split whole (image, channel) planes, or block-planes in a blocked layout (pool_block); every
// buffer of a pool or its gradient has the same images and channels.
int64_t pool_items(const OpCall& call) {
  const Shape& x = call.shapes[0];
  const int64_t block = pool_block(call);
  return x[0] * (block > 0 ? x[1] / block : x[1]);
}

}  // namespace

int64_t work_items(const OpCall& call) {
  if (const auto g = conv_pass_geometry(call)) return conv_items(call, *g);
  if (is_pool(call.kind)) return pool_items(call);
  switch (call.kind) {
    case OpKind::matmul: return matmul_tiling(call.shapes[2][0], call.shapes[2][1]).count;
    case OpKind::batch_norm:
    case OpKind::batch_norm_grad: {
      const BatchNormDims d = BatchNormDims::of(call);
      return d.block > 0 ? d.c / d.block : d.c;
    }
    default: return 0;
  }
}

int useful_width(const OpCall& call, int max_width) {
  const int64_t items = work_items(call);
  if (items <= 0) return std::max(1, max_width);
  return static_cast<int>(std::clamp<int64_t>(items, 1, std::max(1, max_width)));
}

}  // namespace corun::codelets
