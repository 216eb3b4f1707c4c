// Shape is a public value type; its checks live here with the other base utilities.
#include <corun/tensor.hpp>

#include "base/check.hpp"

#include <sstream>

namespace corun {

Shape Shape::of(const int64_t* extents, int n) {
  CORUN_CHECK(n >= 1 && n <= kMaxDims, Status::invalid_argument,
              "a shape has 1 to " << kMaxDims << " dimensions, got " << n);
  Shape s;
  s.rank = n;
  for (int i = 0; i < n; ++i) {
    CORUN_CHECK(extents[i] > 0, Status::invalid_argument,
                "shape extents must be positive, dimension " << i << " is " << extents[i]);
    s.dims[static_cast<size_t>(i)] = extents[i];
  }
  // Every size computed from a shape (elements, bytes, offsets) fits in 64 bits: a model flag or a file
  // asking for more is refused here, before any multiplication can wrap around.
  int64_t count = 1;
  for (int i = 0; i < n; ++i) {
    CORUN_CHECK(!__builtin_mul_overflow(count, extents[i], &count) && count <= (int64_t{1} << 60),
                Status::invalid_argument, "shape " << s.str() << " holds more than 2^60 elements: no memory holds it");
  }
  return s;
}

Shape::Shape(std::initializer_list<int64_t> extents) {
  *this = of(extents.begin(), static_cast<int>(extents.size()));
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[static_cast<size_t>(i)];
  return rank == 0 ? 0 : n;
}

int64_t Shape::outer(int dim) const {
  int64_t n = 1;
  for (int i = 0; i < dim; ++i) n *= dims[static_cast<size_t>(i)];
  return n;
}

int64_t Shape::inner(int dim) const {
  int64_t n = 1;
  for (int i = dim + 1; i < rank; ++i) n *= dims[static_cast<size_t>(i)];
  return n;
}

std::string Shape::str() const {
  std::ostringstream os;
  os << '[';
  for (int i = 0; i < rank; ++i) os << (i ? ", " : "") << dims[static_cast<size_t>(i)];
  os << ']';
  return os.str();
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[static_cast<size_t>(i)] != o.dims[static_cast<size_t>(i)]) return false;
  return true;
}

}  // namespace corun
