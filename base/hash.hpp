// base/hash.hpp — FNV-1a (64 bit), the one hash corun keys files, machines, graphs and seeds with.
//
// Not for security: it names plan files and perfmodel directories, tells graphs and binaries apart, and seeds
// dropout masks. Those values are stored or compared across processes, so they never change: the callers
// that started with a basis one digit short of FNV's (kFnvShortBasis) keep it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace corun::hash {

inline constexpr uint64_t kFnvBasis = 14695981039346656037ull;  ///< FNV-1a 64's offset basis
/// The basis corun's first hashes were written with (one digit short of kFnvBasis): machine keys, serving
/// plan files, checkpoint digests and ONNX dropout seeds keep it, so what they named before still matches.
inline constexpr uint64_t kFnvShortBasis = 1469598103934665603ull;
inline constexpr uint64_t kFnvPrime = 1099511628211ull;

/// Continues hash `h` over `n` bytes.
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvBasis) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

inline uint64_t fnv1a(std::string_view text, uint64_t h = kFnvBasis) { return fnv1a(text.data(), text.size(), h); }

/// Continues hash `h` over the eight bytes of `v`, least significant first (the same on every host).
inline uint64_t fnv1a_u64(uint64_t h, uint64_t v) {
  for (int b = 0; b < 8; ++b) h = (h ^ ((v >> (8 * b)) & 0xff)) * kFnvPrime;
  return h;
}

}  // namespace corun::hash
