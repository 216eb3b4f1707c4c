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

namespace {

// nullptr for a refused or failed allocation.
void* allocate(size_t size) noexcept {
  if (size > corun::fuzz::kAllocationCap) {
    corun::fuzz::refused_allocation() = size;
    return nullptr;
  }
  return std::malloc(size == 0 ? 1 : size);
}

}  // namespace

// Every plain, array and nothrow form, so that no block is allocated by one allocator and freed by another
// (AddressSanitizer reports such a mismatch: std::stable_sort's nothrow buffer was one). The aligned forms
// are left to the runtime, in pairs.
void* operator new(size_t size) {
  if (void* p = allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) {
  if (void* p = allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return allocate(size);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return allocate(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
