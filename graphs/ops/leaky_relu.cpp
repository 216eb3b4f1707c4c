// leaky_relu: Y = X > 0 ? X : alpha * X (alpha in the node's f); its derivative reads the input X.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

#include <cmath>

namespace corun {
namespace graphs {
namespace {

std::vector<Shape> shapes(const ShapeQuery& q) {
  if (!std::isfinite(q.f)) q.fail("the negative slope must be finite, got " + std::to_string(q.f));
  return same_shape(q);
}

void backward(GradContext& ctx) {
  ctx.unary_elementwise(codelets::OpKind::leaky_relu_grad, false);
}

}  // namespace

const OpRules leaky_relu_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::leaky_relu(Tensor x, float alpha, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::leaky_relu, {{x}, {}, alpha}, name);
}

}  // namespace corun
