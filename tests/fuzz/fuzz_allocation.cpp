// tests/fuzz/fuzz_allocation.cpp — the fuzz test's replacement of the global operator new: a request above
// kAllocationCap is refused (std::bad_alloc) and remembered, so that a reader which sizes a buffer from an
// unchecked field of a tiny file is a reported failure, not an out-of-memory kill of the CI machine (or, under
// AddressSanitizer, an "allocation-size-too-big" abort that names no input). Delete is replaced with it: both
// go to malloc/free, which the sanitizers still check.
#include "fuzz/fuzz_harness.hpp"

#include <cstdlib>
#include <new>

namespace corun::fuzz {

std::atomic<size_t>& refused_allocation() {
  static std::atomic<size_t> bytes{0};
  return bytes;
}

}  // namespace corun::fuzz

void* operator new(size_t size) {
  if (size > corun::fuzz::kAllocationCap) {
    corun::fuzz::refused_allocation() = size;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
