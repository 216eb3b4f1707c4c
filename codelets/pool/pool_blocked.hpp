// What the pooling kernels on oneDNN's blocked layout nChw<B>c share (max_pool_blocked.cpp,
// avg_pool_blocked.cpp): block-plane q (image n, channels [cb B, cb B + B)) is an [H][W][B] array at q B H W, so
// one position of a block is one vector, and members take whole block-planes.
#pragma once

#include "codelets/pool/pool.hpp"

#include <cstdint>

namespace corun::codelets::pool_blocked {

// One position of a block: its B channels as one vector (GCC's vector extension: one AVX-512 register for 16
// floats, two AVX2 or four SSE registers), and B positions (int32) as another.
// (Spelled out per width: GCC drops vector_size on an alias whose size depends on a template parameter.)
using Floats16 = float __attribute__((vector_size(16 * sizeof(float))));
using Ints16 = int32_t __attribute__((vector_size(16 * sizeof(int32_t))));
using Floats8 = float __attribute__((vector_size(8 * sizeof(float))));
using Ints8 = int32_t __attribute__((vector_size(8 * sizeof(int32_t))));

template <int64_t B>
struct Lanes;
template <>
struct Lanes<16> {
  using Floats = Floats16;
  using Ints = Ints16;
};
template <>
struct Lanes<8> {
  using Floats = Floats8;
  using Ints = Ints8;
};

/// The member's block-planes of a call whose input-side shape is x and whose layout has block `block`.
inline Range member_block_planes(const Shape& x, int64_t block, int rank, int width) {
  return split_range(x[0] * (x[1] / block), rank, width);
}

}  // namespace corun::codelets::pool_blocked
