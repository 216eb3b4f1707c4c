// Average pooling on activations in oneDNN's blocked layout nChw<B>c (Graph::block_layouts; pool.hpp, i[11]):
// block-plane q (image n, channels [cb B, cb B + B)) is an [H][W][B] array at q B H W, so one output position
// of B channels is one vector and every tap one load (pool_blocked.hpp; max_pool_blocked.cpp does the same for
// max pooling).
// Inception-v3's branch pools sit between concatenations: with them plain, every inception block's output was
// reordered to NCHW and back into the next block's convolutions, forward and backward.
//
// Same bits as avg_pool_fast on the same values: per channel, a float sum from +0 over the clamped window in
// row-major order, divided by the window's count; the backward adds each output's share (dY / count) into dX in
// output order, in float. Members take whole block-planes.
#include "codelets/pool/pool.hpp"
#include "codelets/pool/pool_blocked.hpp"

#include "codelets/simd_clones.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace corun::codelets {

namespace {

using namespace pool_blocked;

template <int64_t B>
void forward(const PoolGeometry& g, const float* x, float* y, Range block_planes) {
  using Floats = typename Lanes<B>::Floats;
  static_assert(sizeof(Floats) == B * sizeof(float));
  for (int64_t q = block_planes.begin; q < block_planes.end; ++q) {
    const float* plane = x + q * B * g.h * g.w;
    float* out = y + q * B * g.oh * g.ow;
    for_each_window(g, [&](int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      Floats sum{};
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) {
          Floats v;
          std::memcpy(&v, plane + (ih * g.w + iw) * B, sizeof v);
          sum += v;
        }
      const int64_t n = g.average_count(oh, ow, h0, h1, w0, w1);
      const Floats mean = n == 0 ? Floats{} : sum / static_cast<float>(n);
      std::memcpy(out + (oh * g.ow + ow) * B, &mean, sizeof mean);
    });
  }
}

template <int64_t B>
void backward(const PoolGeometry& g, const float* dy, float* dx, Range block_planes) {
  using Floats = typename Lanes<B>::Floats;
  for (int64_t q = block_planes.begin; q < block_planes.end; ++q) {
    const float* grad = dy + q * B * g.oh * g.ow;
    float* d = dx + q * B * g.h * g.w;
    std::fill_n(d, B * g.h * g.w, 0.0f);
    for_each_window(g, [&](int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
      const int64_t n = g.average_count(oh, ow, h0, h1, w0, w1);
      if (n == 0) return;
      Floats share;
      std::memcpy(&share, grad + (oh * g.ow + ow) * B, sizeof share);
      share = share / static_cast<float>(n);
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) {
          float* tap = d + (ih * g.w + iw) * B;
          Floats acc;
          std::memcpy(&acc, tap, sizeof acc);
          acc += share;
          std::memcpy(tap, &acc, sizeof acc);
        }
    });
  }
}

}  // namespace

CORUN_SIMD_CLONES void avg_pool_blocked(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const int64_t block = pool_block(call);
  const Range mine = member_block_planes(call.shapes[0], block, rank, width);
  if (block == 16) forward<16>(g, buf[0], buf[1], mine);
  else forward<8>(g, buf[0], buf[1], mine);
}

CORUN_SIMD_CLONES void avg_pool_grad_blocked(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[1], call.shapes[0]);
  const int64_t block = pool_block(call);
  const Range mine = member_block_planes(call.shapes[0], block, rank, width);
  if (block == 16) backward<16>(g, buf[0], buf[1], mine);
  else backward<8>(g, buf[0], buf[1], mine);
}

}  // namespace corun::codelets
