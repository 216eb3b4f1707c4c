// reduce_axes: Y = f * the sum of X over a set of axes (ONNX ReduceSum / ReduceMean). The builders pass
// the axes as given in NodeArgs::extents (for the shape rule's checks and messages) and as a bit mask in
// i[0] (for the kernels); i[1] is keepdims. Empty axes reduce every axis (noop_with_empty_axes = 0).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace corun {
namespace graphs {
namespace {

using codelets::OpKind;

// The mask of `axes` over a rank-`rank` tensor (negative axes count from the end); -1 when an axis is out
// of range or repeated, so the shape rule reports it.
int64_t axes_mask(const std::vector<int64_t>& axes, int rank) {
  if (axes.empty()) return (int64_t{1} << rank) - 1;
  int64_t mask = 0;
  for (const int64_t a : axes) {
    const int64_t d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank || ((mask >> d) & 1) != 0) return -1;
    mask |= int64_t{1} << d;
  }
  return mask;
}

std::string list_str(const std::vector<int64_t>& axes) {
  std::string s = "[";
  for (size_t k = 0; k < axes.size(); ++k) s += (k ? ", " : "") + std::to_string(axes[k]);
  return s + "]";
}

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sx = q.in[0];
  const int64_t mask = axes_mask(q.extents, sx.rank);
  if (mask < 0)
    q.fail("axes " + list_str(q.extents) + " must be distinct and in [-" + std::to_string(sx.rank) + ", " +
           std::to_string(sx.rank - 1) + "] for X " + sx.str());
  if (mask != q.i[0]) q.fail("axis mask " + std::to_string(q.i[0]) + " does not match axes " + list_str(q.extents));
  std::vector<int64_t> out;
  for (int d = 0; d < sx.rank; ++d) {
    const bool reduced = ((mask >> d) & 1) != 0;
    if (!reduced)
      out.push_back(sx[d]);
    else if (q.i[1] != 0)
      out.push_back(1);
  }
  if (out.empty()) out.push_back(1);  // every axis reduced without keepdims: [1], corun has no rank 0
  return {Shape::of(out.data(), static_cast<int>(out.size()))};
}

void backward(GradContext& ctx) {
  ctx.dx_from_dy(OpKind::reduce_axes_grad, ".reduce");
}

// One builder for both: the reduced element count gives the mean's scale.
Tensor reduce(Graph& g, Tensor x, const std::vector<int>& axes, bool keepdims, bool mean, const std::string& name) {
  const std::vector<int64_t> list(axes.begin(), axes.end());
  const int rank = x.valid() ? x.shape().rank : 0;
  const int64_t mask = std::max<int64_t>(axes_mask(list, rank), 0);  // a bad list: the shape rule says so
  double count = 1.0;
  for (int d = 0; d < rank; ++d)
    if (((mask >> d) & 1) != 0) count *= static_cast<double>(x.shape()[d]);
  const float scale = mean ? static_cast<float>(1.0 / count) : 1.0f;
  return build1(g, OpKind::reduce_axes, NodeArgs({x}, {mask, keepdims ? 1 : 0}, scale, list), name);
}

}  // namespace

const OpRules reduce_axes_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::reduce_sum_axes(Tensor x, std::vector<int> axes, bool keepdims, const std::string& name) {
  return graphs::reduce(*this, x, axes, keepdims, false, name);
}

Tensor Graph::reduce_mean(Tensor x, std::vector<int> axes, bool keepdims, const std::string& name) {
  return graphs::reduce(*this, x, axes, keepdims, true, name);
}

}  // namespace corun
