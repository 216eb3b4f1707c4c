// logistic_xent: elementwise L = softplus(Z) - T*Z (node "<name>.elems"), then their mean as a separate
// single-member reduce_sum "<name>".
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  if (q.in[0] != q.in[1]) q.mismatch("logits and targets differ", "logits", q.in[0], "targets", q.in[1]);
  return {q.in[0]};
}

void backward(GradContext& ctx) {
  const int z = ctx.in(0), t = ctx.in(1), dl = ctx.grad(ctx.in(2));
  if (dl < 0 || !ctx.need(0)) return;
  const Shape s = ctx.shape(z);
  ctx.contribute_new(z, s, "", [&](int c) {
    ctx.add_node(OpKind::logistic_xent_grad, ctx.tag(),
                 {{z, Access::read, s}, {t, Access::read, ctx.shape(t)}, {dl, Access::read, s}, {c, Access::write, s}});
  });
}

}  // namespace

const OpRules logistic_xent_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::logistic_xent(Tensor logits, Tensor targets, const std::string& name) {
  const std::string node = impl().node_name(name, "logistic_xent");
  const Tensor per = graphs::build(*this, codelets::OpKind::logistic_xent, {{logits, targets}}, node, ".elems")[0];
  return reduce_sum(per, 1.0f / static_cast<float>(per.shape().numel()), node);
}

}  // namespace corun
