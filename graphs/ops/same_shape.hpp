// graphs/ops/same_shape.hpp — the shape rule of ops whose operands and output share one shape.
#pragma once

#include "graphs/ops/rules.hpp"

namespace corun::graphs {

/// One or two operands (A, B) of one shape, which the one output has too.
inline std::vector<Shape> same_shape(const ShapeQuery& q) {
  if (q.in.size() == 2 && q.in[1] != q.in[0])
    q.mismatch("operands must have the same shape", "A", q.in[0], "B", q.in[1]);
  return {q.in[0]};
}

}  // namespace corun::graphs
