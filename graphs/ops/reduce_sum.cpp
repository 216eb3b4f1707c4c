// reduce_sum: Y[0] = f * the sum of all of X (one member: the reduction is never split).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery&) { return {Shape{1}}; }

void backward(GradContext& ctx) {
  const int x = ctx.in(0), dy = ctx.grad(ctx.in(1));
  if (dy < 0 || !ctx.need(0)) return;
  ctx.contribute_new(x, ctx.shape(x), ".rsum", [&](int c) {
    ctx.add_node(OpKind::reduce_sum_grad, ctx.tag(), {{dy, Access::read, Shape{1}}, {c, Access::write, ctx.shape(x)}}, {},
                 ctx.call().f);
  });
}

}  // namespace

const OpRules reduce_sum_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::reduce_sum(Tensor x, float scale, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::reduce_sum, {{x}, {}, scale}, name);
}

}  // namespace corun
