// relu: Y = max(X, 0); its derivative reads the input X.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

namespace corun {
namespace graphs {
namespace {

void backward(GradContext& ctx) {
  ctx.unary_elementwise(codelets::OpKind::relu_grad, false);
}

}  // namespace

const OpRules relu_rules{&same_shape, &backward};

}  // namespace graphs

Tensor Graph::relu(Tensor x, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::relu, {{x}}, name);
}

}  // namespace corun
