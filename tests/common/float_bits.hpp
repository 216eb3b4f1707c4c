// tests/common/float_bits.hpp — a float's bits and back, for tests that compare results bit for bit or plant NaN
// payloads and guard patterns.
#pragma once

#include <cstdint>
#include <cstring>

namespace corun::testing {

inline float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// A quiet NaN carrying `payload` in its low 22 bits.
inline float nan_with_payload(uint32_t payload) { return from_bits(0x7fc00000u | (payload & 0x3fffffu)); }

}  // namespace corun::testing
