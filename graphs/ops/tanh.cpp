// tanh: Y = tanh(X); its derivative is cheapest from the output Y.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

namespace corun {
namespace graphs {
namespace {

void backward(GradContext& ctx) {
  ctx.unary_elementwise(codelets::OpKind::tanh_grad, true);
}

}  // namespace

const OpRules tanh_rules{&same_shape, &backward};

}  // namespace graphs

Tensor Graph::tanh(Tensor x, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::tanh, {{x}}, name);
}

}  // namespace corun
