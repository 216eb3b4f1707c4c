// Copies between the plain NCHW layout and oneDNN's blocked nChw<B>c (channels in blocks of B, each block's B
// values of one position contiguous), for the kernels that take blocked activations (Graph::block_layouts): the
// convolutions (conv2d/conv_layout.hpp) and max pooling (pool/pool.hpp) run their reference and fallback paths
// on plain copies.
#pragma once

#include <cstdint>

namespace corun::codelets {

namespace detail {
// NCHW <-> nChw<block>c: `into_blocked` from the first to the second, else back.
inline void reblock(const float* src, float* dst, int64_t images, int64_t channels, int64_t plane, int64_t block,
                    bool into_blocked) {
  for (int64_t n = 0; n < images; ++n)
    for (int64_t cb = 0; cb < channels / block; ++cb) {
      const int64_t base = (n * channels + cb * block) * plane;
      for (int64_t j = 0; j < block; ++j)
        for (int64_t p = 0; p < plane; ++p) {
          const int64_t plain = base + j * plane + p, blocked = base + p * block + j;
          if (into_blocked) dst[blocked] = src[plain];
          else dst[plain] = src[blocked];
        }
    }
}
}  // namespace detail

/// blocked = plain in nChw<block>c, for `images` images of `channels` channels (a multiple of `block`) and
/// `plane` positions each.
inline void to_blocked(const float* plain, float* blocked, int64_t images, int64_t channels, int64_t plane,
                       int64_t block) {
  detail::reblock(plain, blocked, images, channels, plane, block, true);
}

/// The inverse: plain NCHW from nChw<block>c.
inline void to_plain(const float* blocked, float* plain, int64_t images, int64_t channels, int64_t plane,
                     int64_t block) {
  detail::reblock(blocked, plain, images, channels, plane, block, false);
}

}  // namespace corun::codelets
