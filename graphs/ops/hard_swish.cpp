// hard_swish: Y = X * min(max(X + 3, 0), 6) / 6; its derivative reads the input X.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

namespace corun {
namespace graphs {
namespace {

void backward(GradContext& ctx) {
  ctx.unary_elementwise(codelets::OpKind::hard_swish_grad, false);
}

}  // namespace

const OpRules hard_swish_rules{&same_shape, &backward};

}  // namespace graphs

Tensor Graph::hard_swish(Tensor x, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::hard_swish, {{x}}, name);
}

}  // namespace corun
