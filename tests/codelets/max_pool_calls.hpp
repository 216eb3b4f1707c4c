// tests/codelets/max_pool_calls.hpp — the max_pool / max_pool_grad calls of one pooling on NCHW, for the tests
// that run them by hand (test_ops's max-pool cases, test_max_pool_nan).
#pragma once

#include "codelets/op.hpp"
#include "codelets/pool/pool.hpp"

#include <cstdint>
#include <utility>

namespace corun::codelets::testing {

/// Output extent of a window of `k` at stride `s` over `in` padded by `pb` before and `pe` after (ONNX's
/// ceil_mode rule: a last window starting in the end padding is dropped).
inline int64_t pooled_extent(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil) {
  const int64_t span = in + pb + pe - k;
  int64_t out = (ceil ? span + s - 1 : span) / s + 1;
  if (ceil && (out - 1) * s >= in + pb) --out;
  return out;
}

/// The pooled shape of `xs` [N, C, H, W] under `p`.
inline Shape pooled_shape(const Shape& xs, const PoolParams& p) {
  return {xs[0], xs[1], pooled_extent(xs[2], p.kernel_h, p.stride_h, p.pad_top, p.pad_bottom, p.ceil_mode),
          pooled_extent(xs[3], p.kernel_w, p.stride_w, p.pad_left, p.pad_right, p.ceil_mode)};
}

/// max_pool (X -> Y) and max_pool_grad (X, dY -> dX) of `p` from `xs` to `ys`.
inline std::pair<OpCall, OpCall> max_pool_calls(const Shape& xs, const Shape& ys, const PoolParams& p) {
  OpCall fwd;
  fwd.kind = OpKind::max_pool;
  fwd.shapes = {xs, ys};
  fwd.modes = {Access::read, Access::write};
  fwd.i = p.attrs();
  OpCall bwd = fwd;
  bwd.kind = OpKind::max_pool_grad;
  bwd.shapes = {xs, ys, xs};
  bwd.modes = {Access::read, Access::read, Access::write};
  return {fwd, bwd};
}

}  // namespace corun::codelets::testing
