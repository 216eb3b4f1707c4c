// Max pooling on activations in oneDNN's blocked layout nChw<B>c (Graph::block_layouts; pool.hpp, i[11]):
// block-plane q (image n, channels [cb B, cb B + B)) is an [H][W][B] array at q B H W, and channels are its
// innermost, contiguous axis, so one output position of B channels is one vector and every tap one load.
//
// Same bits as the plain kernels on the same values: per channel, taps compared with the first-tap / max_pool_takes
// rule in row-major window order (max_pool_fast.cpp), and the backward adds each output's gradient into dX in output
// order, in float, as max_pool_grad_fast does. Members take whole block-planes. A block-plane runs first without
// the NaN test, so that the select compiles to a max (pool.hpp, max_pool_takes), summing each window's taps on
// the way; only when a sum is NaN (a tap may be NaN) is the block-plane computed again with the test. Summing
// the taps as they are loaded, not checking the block-plane before, as these kernels are so light that a second
// pass over X made the forward 1.9x slower (PathNet small's pools, 2-core Xeon).
#include "codelets/pool/pool.hpp"
#include "codelets/pool/pool_blocked.hpp"

#include "codelets/simd_clones.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace corun::codelets {

namespace {

using namespace pool_blocked;

// The window of output (oh, ow) clamped to the image; false when it holds no input (all padding).
inline bool clamped_window(const PoolGeometry& g, int64_t oh, int64_t ow, int64_t& h0, int64_t& h1, int64_t& w0,
                           int64_t& w1) {
  PoolGeometry::clamp(oh, g.sh, g.pt, g.kh, g.h, h0, h1);
  PoolGeometry::clamp(ow, g.sw, g.pl, g.kw, g.w, w0, w1);
  return h0 < h1 && w0 < w1;
}

// The first maximum of each of the B channels of window [h0, h1) x [w0, w1) of one block-plane: the first tap
// as it is, then max_pool_takes (greater, or NaN with kNan) in row-major window order (a select, so the vector
// compiles to a max or blend). With `at`, also the position ih * W + iw of each channel's maximum. Without kNan,
// `nan` also gets the lanes whose taps' sum is NaN (a tap may be NaN: the caller then takes them with kNan).
template <int64_t B, bool kWithPositions, bool kNan>
inline void window_max(const PoolGeometry& g, const float* plane, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                       typename Lanes<B>::Floats& best, typename Lanes<B>::Ints* at, typename Lanes<B>::Ints& nan) {
  using Floats = typename Lanes<B>::Floats;
  using Ints = typename Lanes<B>::Ints;
  std::memcpy(&best, plane + (h0 * g.w + w0) * B, sizeof best);
  if constexpr (kWithPositions) *at = Ints{} + static_cast<int32_t>(h0 * g.w + w0);
  Floats sum = best;
  for (int64_t ih = h0; ih < h1; ++ih)
    for (int64_t iw = ih == h0 ? w0 + 1 : w0; iw < w1; ++iw) {
      Floats v;
      std::memcpy(&v, plane + (ih * g.w + iw) * B, sizeof v);
      if constexpr (!kNan) sum += v;
      Ints take;
      max_pool_takes<kNan>(v, best, take);
      best = take ? v : best;
      if constexpr (kWithPositions) *at = take ? Ints{} + static_cast<int32_t>(ih * g.w + iw) : *at;
    }
  if constexpr (!kNan) nan |= sum != sum;
}



// The outputs of one block-plane; without kNan, false when a tap may be NaN (the outputs then want kNan).
template <int64_t B, bool kNan>
bool forward_plane(const PoolGeometry& g, const float* plane, float* out) {
  using Floats = typename Lanes<B>::Floats;
  static_assert(sizeof(Floats) == B * sizeof(float));
  typename Lanes<B>::Ints nan{};
  for (int64_t oh = 0; oh < g.oh; ++oh)
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      int64_t h0, h1, w0, w1;
      Floats best{};  // an all-padding window: 0, as the reference
      if (clamped_window(g, oh, ow, h0, h1, w0, w1))
        window_max<B, false, kNan>(g, plane, h0, h1, w0, w1, best, nullptr, nan);
      std::memcpy(out + (oh * g.ow + ow) * B, &best, sizeof best);
    }
  return !max_pool_any_lane(nan);
}

template <int64_t B>
void forward(const PoolGeometry& g, const float* x, float* y, Range block_planes) {
  for (int64_t q = block_planes.begin; q < block_planes.end; ++q) {
    const float* plane = x + q * B * g.h * g.w;
    float* out = y + q * B * g.oh * g.ow;
    if (!forward_plane<B, false>(g, plane, out)) forward_plane<B, true>(g, plane, out);
  }
}

// The gradient of one block-plane into `d`, zeroed first; without kNan, false when a tap may be NaN.
template <int64_t B, bool kNan>
bool backward_plane(const PoolGeometry& g, const float* plane, const float* grad, float* d) {
  using Floats = typename Lanes<B>::Floats;
  using Ints = typename Lanes<B>::Ints;
  std::fill_n(d, B * g.h * g.w, 0.0f);
  Ints nan{};
  for (int64_t oh = 0; oh < g.oh; ++oh)
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      int64_t h0, h1, w0, w1;
      if (!clamped_window(g, oh, ow, h0, h1, w0, w1)) continue;
      Floats best, gy;
      Ints at;
      window_max<B, true, kNan>(g, plane, h0, h1, w0, w1, best, &at, nan);
      std::memcpy(&gy, grad + (oh * g.ow + ow) * B, sizeof gy);
      // Each tap of the window adds the gradient of the channels whose maximum it holds and 0 to the others:
      // one vector per tap instead of B scalar updates. Adding +0 leaves every value as it was (a sum that
      // starts at +0 never becomes -0), so dX gets exactly the plain kernel's sums in its order.
      for (int64_t ih = h0; ih < h1; ++ih)
        for (int64_t iw = w0; iw < w1; ++iw) {
          const auto pos = static_cast<int32_t>(ih * g.w + iw);
          float* tap = d + pos * B;
          Floats acc;
          std::memcpy(&acc, tap, sizeof acc);
          acc += at == pos ? gy : Floats{};
          std::memcpy(tap, &acc, sizeof acc);
        }
    }
  return !max_pool_any_lane(nan);
}

template <int64_t B>
void backward(const PoolGeometry& g, const float* x, const float* dy, float* dx, Range block_planes) {
  for (int64_t q = block_planes.begin; q < block_planes.end; ++q) {
    const float* plane = x + q * B * g.h * g.w;
    const float* grad = dy + q * B * g.oh * g.ow;
    float* d = dx + q * B * g.h * g.w;
    if (!backward_plane<B, false>(g, plane, grad, d)) backward_plane<B, true>(g, plane, grad, d);
  }
}

}  // namespace

CORUN_SIMD_CLONES void max_pool_blocked(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const int64_t block = pool_block(call);
  const Range mine = member_block_planes(call.shapes[0], block, rank, width);
  if (block == 16) forward<16>(g, buf[0], buf[1], mine);
  else forward<8>(g, buf[0], buf[1], mine);
}

CORUN_SIMD_CLONES void max_pool_grad_blocked(const OpCall& call, float* const* buf, int rank, int width) {
  const PoolGeometry g = PoolGeometry::of(call, call.shapes[0], call.shapes[1]);
  const int64_t block = pool_block(call);
  const Range mine = member_block_planes(call.shapes[0], block, rank, width);
  if (block == 16) backward<16>(g, buf[0], buf[1], buf[2], mine);
  else backward<8>(g, buf[0], buf[1], buf[2], mine);
}

void pool_via_plain(Kernel kernel, const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t block = pool_block(call);
  const Shape& xs = call.shapes[0];
  const Range mine = member_block_planes(xs, block, rank, width);
  if (mine.size() <= 0) return;
  // Block-plane q holds plain planes [q B, q B + B) (image n, channel block cb: q = n C / B + cb), at the same
  // byte range in both layouts: the member's block-planes are a call of mine.size() images of B channels.
  OpCall part = call;
  part.i[kPoolBlockAttr] = 0;
  thread_local std::vector<float> plain[3];
  std::vector<float*> parts(static_cast<size_t>(call.nbuffers()));
  for (int b = 0; b < call.nbuffers(); ++b) {
    const Shape& s = call.shapes[static_cast<size_t>(b)];
    const int64_t plane = s[2] * s[3], floats = mine.size() * block * plane;
    part.shapes[static_cast<size_t>(b)] = Shape{mine.size(), block, s[2], s[3]};
    std::vector<float>& copy = plain[b];
    if (static_cast<int64_t>(copy.size()) < floats) copy.resize(static_cast<size_t>(floats));
    parts[static_cast<size_t>(b)] = copy.data();
    if (call.modes[static_cast<size_t>(b)] != Access::write)
      to_plain(buf[b] + mine.begin * block * plane, copy.data(), mine.size(), block, plane, block);
  }
  kernel(part, parts.data(), 0, 1);
  const int out = call.nbuffers() - 1;
  const Shape& s = call.shapes[static_cast<size_t>(out)];
  const int64_t plane = s[2] * s[3];
  to_blocked(parts[static_cast<size_t>(out)], buf[out] + mine.begin * block * plane, mine.size(), block, plane, block);
}

}  // namespace corun::codelets
