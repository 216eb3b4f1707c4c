// codelets/elementwise_kernels.hpp — the one body of every same-shape elementwise kernel.
//
// An elementwise op's kernels are one line each: the template splits the output elements over the team and
// applies the op's scalar formula (codelets/elementwise.hpp) to each. ew_chain runs the same loops
// (map1/map2) over its blocks, so fused and unfused nodes compute every element by the same function.
// Buffers: the op's inputs (1 or 2, all of the output's shape), then the output.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets::ew {

/// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC
/// -O2 (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide
/// inner loops; member blocks are multiples of 16, so the scalar tails run only at the end of the tensor.
inline constexpr int kBlock = 16;

template <class F>
inline void map1(F f, const float* __restrict x, float* __restrict y, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) y[e + j] = f(x[e + j]);
  for (; e < n; ++e) y[e] = f(x[e]);
}

/// a and b may be the same block (mul(t, t)); restrict only promises that y aliases neither.
template <class F>
inline void map2(F f, const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) y[e + j] = f(a[e + j], b[e + j]);
  for (; e < n; ++e) y[e] = f(a[e], b[e]);
}

/// Fast kernel of a one-input op: this member's 16-aligned block through `f` (pass a lambda, so the
/// formula is inlined and the arithmetic ones vectorise).
template <class F>
inline void unary_fast(F f, const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width, kBlock);
  if (r.size() > 0) map1(f, buf[0] + r.begin, buf[1] + r.begin, r.size());
}

template <class F>
inline void binary_fast(F f, const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width, kBlock);
  if (r.size() > 0) map2(f, buf[0] + r.begin, buf[1] + r.begin, buf[2] + r.begin, r.size());
}

/// Reference kernels: one element at a time over an unaligned split (the specification).
template <class F>
inline void unary_ref(F f, const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[1][e] = f(buf[0][e]);
}

template <class F>
inline void binary_ref(F f, const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) buf[2][e] = f(buf[0][e], buf[1][e]);
}

}  // namespace corun::codelets::ew
