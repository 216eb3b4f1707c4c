// unary_math: sqrt, erf, exp, log, neg, abs, reciprocal (chainable, formulas in codelets/elementwise.hpp)
// and clip (lo, hi as float bits in i[0], i[1]). Each gradient reads the forward output where that is
// cheaper (sqrt, exp, reciprocal) and the input otherwise; neg is its own gradient.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

#include "codelets/unary_math/unary_math.hpp"

#include <cmath>

namespace corun {
namespace graphs {
namespace {

using codelets::OpKind;

void sqrt_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::sqrt_grad, true);
}
void erf_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::erf_grad, false);
}
void exp_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::exp_grad, true);
}
void log_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::log_grad, false);
}
void neg_backward(GradContext& ctx) {
  ctx.dx_from_dy(OpKind::neg, ".neg");
}
void abs_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::abs_grad, false);
}
void reciprocal_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::reciprocal_grad, true);
}
void clip_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::clip_grad, false);
}

std::vector<Shape> clip_shapes(const ShapeQuery& q) {
  const float lo = codelets::float_from_attr_bits(q.i[0]);
  const float hi = codelets::float_from_attr_bits(q.i[1]);
  if (std::isnan(lo) || std::isnan(hi))
    q.fail("lo and hi must be numbers (got " + std::to_string(lo) + ", " + std::to_string(hi) +
           "); use -inf or +inf for an open end");
  return same_shape(q);
}

}  // namespace

const OpRules sqrt_rules{&same_shape, &sqrt_backward};
const OpRules erf_rules{&same_shape, &erf_backward};
const OpRules exp_rules{&same_shape, &exp_backward};
const OpRules log_rules{&same_shape, &log_backward};
const OpRules neg_rules{&same_shape, &neg_backward};
const OpRules abs_rules{&same_shape, &abs_backward};
const OpRules reciprocal_rules{&same_shape, &reciprocal_backward};
const OpRules clip_rules{&clip_shapes, &clip_backward};

}  // namespace graphs

using codelets::OpKind;

Tensor Graph::sqrt(Tensor x, const std::string& name) {
  return graphs::build1(*this, OpKind::sqrt, {{x}}, name);
}
Tensor Graph::erf(Tensor x, const std::string& name) {
  return graphs::build1(*this, OpKind::erf, {{x}}, name);
}
Tensor Graph::exp(Tensor x, const std::string& name) {
  return graphs::build1(*this, OpKind::exp, {{x}}, name);
}
Tensor Graph::log(Tensor x, const std::string& name) {
  return graphs::build1(*this, OpKind::log, {{x}}, name);
}
Tensor Graph::neg(Tensor x, const std::string& name) {
  return graphs::build1(*this, OpKind::neg, {{x}}, name);
}
Tensor Graph::abs(Tensor x, const std::string& name) {
  return graphs::build1(*this, OpKind::abs, {{x}}, name);
}
Tensor Graph::reciprocal(Tensor x, const std::string& name) {
  return graphs::build1(*this, OpKind::reciprocal, {{x}}, name);
}

Tensor Graph::clip(Tensor x, float lo, float hi, const std::string& name) {
  return graphs::build1(*this, OpKind::clip, {{x}, {codelets::float_attr_bits(lo), codelets::float_attr_bits(hi)}},
                        name);
}

}  // namespace corun
