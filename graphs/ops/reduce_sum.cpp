// reduce_sum: Y[0] = f * the sum of all of X (one member: the reduction is never split).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

std::vector<Shape> shapes(const ShapeQuery&) {
  return {Shape{1}};
}

void backward(GradContext& ctx) {
  ctx.dx_from_dy(codelets::OpKind::reduce_sum_grad, ".rsum");
}

}  // namespace

const OpRules reduce_sum_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::reduce_sum(Tensor x, float scale, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::reduce_sum, {{x}, {}, scale}, name);
}

}  // namespace corun
