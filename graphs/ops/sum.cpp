// sum: Y = f * the sum of X along dimension i[0] (that dimension removed; a 1-D X gives [1]).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const int dim = static_cast<int>(q.i[0]);
  q.check_dim(dim, q.in[0]);
  return {without_dim(q.in[0], dim)};
}

void backward(GradContext& ctx) {
  const int x = ctx.in(0), dy = ctx.grad(ctx.in(1));
  if (dy < 0 || !ctx.need(0)) return;
  const codelets::OpCall& call = ctx.call();
  ctx.contribute_new(x, ctx.shape(x), ".sum", [&](int c) {
    ctx.add_node(OpKind::sum_grad, ctx.tag(), {{dy, Access::read, call.shapes[1]}, {c, Access::write, call.shapes[0]}},
                 call.i, call.f);
  });
}

}  // namespace

const OpRules sum_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::sum(Tensor x, int dim, float scale, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::sum, {{x}, {dim, 0, 0, 0}, scale}, name);
}

}  // namespace corun
