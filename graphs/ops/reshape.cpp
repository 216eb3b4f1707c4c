// reshape: Y = X with another shape of the same element count (a copy); its backward reshapes dY back.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

// The new shape travels as the extents list (a Shape does not fit the integer attributes).
std::vector<Shape> shapes(const ShapeQuery& q) {
  Shape shape;
  shape.rank = static_cast<int>(q.extents.size());
  for (size_t d = 0; d < q.extents.size(); ++d) shape.dims[d] = q.extents[d];
  if (shape.rank < 1 || shape.numel() != q.in[0].numel())
    q.mismatch("the element counts differ", "X", q.in[0], "new shape", shape);
  return {shape};
}

void backward(GradContext& ctx) {
  ctx.dx_from_dy(codelets::OpKind::reshape, ".reshape");
}

}  // namespace

const OpRules reshape_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::reshape(Tensor x, const Shape& shape, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::reshape,
                        {{x}, {}, 0.0f, {shape.dims.begin(), shape.dims.begin() + shape.rank}}, name);
}

}  // namespace corun
