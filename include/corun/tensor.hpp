// corun/tensor.hpp — shapes and tensor handles.
//
// A Tensor is a cheap value handle to one f32 value of a Graph (up to 4-D, C order, named). It does not
// own memory: the Graph does, allocated once when the tensor is created.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace corun {

/// Largest number of dimensions of a tensor.
inline constexpr int kMaxDims = 4;

/// A tensor shape: 1 to 4 positive extents, row-major (the last dimension is contiguous).
struct Shape {
  int rank = 0;
  std::array<int64_t, kMaxDims> dims{};

  Shape() = default;
  /// Throws corun::Error when there are 0 or more than 4 extents or one is not positive.
  Shape(std::initializer_list<int64_t> extents);
  /// Same checks as the initializer-list constructor.
  static Shape of(const int64_t* extents, int n);

  int64_t operator[](int i) const { return dims[static_cast<size_t>(i)]; }
  /// Product of the extents.
  int64_t numel() const;
  /// Product of the extents before `dim` (the "outer" count when slicing along `dim`).
  int64_t outer(int dim) const;
  /// Product of the extents after `dim`.
  int64_t inner(int dim) const;
  /// "[64, 512]".
  std::string str() const;

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
};

class Graph;
namespace detail {
struct GraphImpl;
}

/// Handle to one value of a Graph. Default-constructed handles are invalid (`valid()` is false).
/// A handle refers to the graph's storage, not to the Graph object, so it stays valid when the Graph
/// is moved.
class Tensor {
 public:
  Tensor() = default;
  Tensor(const detail::GraphImpl* owner, int id) : owner_(owner), id_(id) {}

  bool valid() const { return owner_ != nullptr && id_ >= 0; }
  /// Index of the value in its graph.
  int id() const { return id_; }
  /// True when the tensor is a value of `graph`.
  bool belongs_to(const Graph& graph) const;
  const Shape& shape() const;
  const std::string& name() const;

  bool operator==(const Tensor& o) const { return owner_ == o.owner_ && id_ == o.id_; }
  bool operator!=(const Tensor& o) const { return !(*this == o); }

 private:
  const detail::GraphImpl* owner_ = nullptr;
  int id_ = -1;
};

}  // namespace corun
