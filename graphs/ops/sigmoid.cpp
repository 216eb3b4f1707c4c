// sigmoid: Y = 1 / (1 + exp(-X)); its derivative is cheapest from the output Y.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

namespace corun {
namespace graphs {
namespace {

void backward(GradContext& ctx) {
  ctx.unary_elementwise(codelets::OpKind::sigmoid_grad, true);
}

}  // namespace

const OpRules sigmoid_rules{&same_shape, &backward};

}  // namespace graphs

Tensor Graph::sigmoid(Tensor x, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::sigmoid, {{x}}, name);
}

}  // namespace corun
