// gelu: Y = X * Phi(X) (exact erf form); its derivative reads the input X.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/same_shape.hpp"

namespace corun {
namespace graphs {
namespace {

void backward(GradContext& ctx) {
  ctx.unary_elementwise(codelets::OpKind::gelu_grad, false);
}

}  // namespace

const OpRules gelu_rules{&same_shape, &backward};

}  // namespace graphs

Tensor Graph::gelu(Tensor x, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::gelu, {{x}}, name);
}

}  // namespace corun
