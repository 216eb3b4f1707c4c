// hard_sigmoid: Y = max(0, min(1, alpha X + beta)) (alpha, beta as float bits in i[0], i[1]); its derivative
// reads the input X.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

#include "codelets/unary_math/unary_math.hpp"

#include <cmath>

namespace corun {
namespace graphs {
namespace {

std::vector<Shape> shapes(const ShapeQuery& q) {
  const float alpha = codelets::float_from_attr_bits(q.i[0]);
  const float beta = codelets::float_from_attr_bits(q.i[1]);
  if (!std::isfinite(alpha) || !std::isfinite(beta))
    q.fail("alpha and beta must be finite, got " + std::to_string(alpha) + " and " + std::to_string(beta));
  return same_shape(q);
}

void backward(GradContext& ctx) {
  ctx.unary_elementwise(codelets::OpKind::hard_sigmoid_grad, false);
}

}  // namespace

const OpRules hard_sigmoid_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::hard_sigmoid(Tensor x, float alpha, float beta, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::hard_sigmoid,
                        {{x}, {codelets::float_attr_bits(alpha), codelets::float_attr_bits(beta)}}, name);
}

}  // namespace corun
