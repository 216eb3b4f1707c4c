// softmax_xent: per row P = softmax(Z) and L = -sum_c T log P (node "<name>.rows"), then the mean of L as a
// separate sum node "<name>", so the row split of the SPMD kernel never splits a reduction.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sz = q.in[0];
  const Shape& st = q.in[1];
  if (sz.rank != 2) q.mismatch("logits must be 2-D [batch, classes]", "logits", sz, "targets", st);
  if (sz != st) q.mismatch("logits and targets differ", "logits", sz, "targets", st);
  return {sz, Shape{sz[0]}};  // the softmax (kept for the backward) and one loss per row
}

void backward(GradContext& ctx) {
  const int z = ctx.in(0), t = ctx.in(1), p = ctx.in(2), dl = ctx.grad(ctx.in(3));
  if (dl < 0 || !ctx.need(0)) return;
  ctx.contribute_new(z, ctx.shape(z), "", [&](int c) {
    ctx.add_node(OpKind::softmax_xent_grad, ctx.tag(),
                 {{p, Access::read, ctx.shape(p)},
                  {t, Access::read, ctx.shape(t)},
                  {dl, Access::read, ctx.shape(ctx.in(3))},
                  {c, Access::write, ctx.shape(z)}});
  });
}

}  // namespace

const OpRules softmax_xent_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::softmax_xent(Tensor logits, Tensor targets, const std::string& name) {
  const std::string node = impl().node_name(name, "softmax_xent");
  const auto outs = graphs::build(*this, codelets::OpKind::softmax_xent, {{logits, targets}}, node, ".rows");
  return sum(outs[1], 0, 1.0f / static_cast<float>(outs[1].shape()[0]), node);
}

}  // namespace corun
