// sub: C = A - B (same shapes).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/broadcast.hpp"
#include "graphs/ops/same_shape.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

void backward(GradContext& ctx) {
  const int a = ctx.in(0), b = ctx.in(1), dc = ctx.grad(ctx.in(2));
  if (dc < 0) return;
  if (ctx.need(0)) ctx.contribute(a, dc, false);
  if (!ctx.need(1)) return;
  // d(A - B)/dB = -dC, as 0 - dC
  const Shape sb = ctx.shape(b);
  const int zero = ctx.constant(sb, 0.0f, ctx.tag() + ".zeros");
  ctx.contribute_new(b, sb, ".neg", [&](int c) {
    ctx.add_node(OpKind::sub, ctx.tag() + ".db",
                 {{zero, Access::read, sb}, {dc, Access::read, sb}, {c, Access::write, sb}});
  });
}

}  // namespace

const OpRules sub_rules{&same_shape, &backward};

}  // namespace graphs

Tensor Graph::sub(Tensor a, Tensor b, const std::string& name) {
  // Other shapes broadcast through binary_bcast; this kind keeps its same-shape path and its bits.
  if (graphs::needs_broadcast(a, b, false)) return graphs::binary_broadcast(*this, codelets::BinaryOp::sub, a, b, name);
  return graphs::build1(*this, codelets::OpKind::sub, {{a, b}}, name);
}

}  // namespace corun
