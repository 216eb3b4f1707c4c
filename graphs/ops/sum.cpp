// sum: Y = f * the sum of X along dimension i[0] (that dimension removed; a 1-D X gives [1]).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

std::vector<Shape> shapes(const ShapeQuery& q) {
  const int dim = static_cast<int>(q.i[0]);
  q.check_dim(dim, q.in[0]);
  return {without_dim(q.in[0], dim)};
}

void backward(GradContext& ctx) {
  ctx.dx_from_dy(codelets::OpKind::sum_grad, ".sum");
}

}  // namespace

const OpRules sum_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::sum(Tensor x, int dim, float scale, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::sum, {{x}, {dim, 0, 0, 0}, scale}, name);
}

}  // namespace corun
