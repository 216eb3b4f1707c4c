// mul: C = A * B elementwise (same shapes).
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
  const Shape s = ctx.shape(a);
  if (ctx.need(0))
    ctx.contribute_new(a, s, ".mul", [&](int c) {
      ctx.add_node(OpKind::mul, ctx.tag() + ".da",
                   {{dc, Access::read, s}, {b, Access::read, s}, {c, Access::write, s}});
    });
  if (ctx.need(1))
    ctx.contribute_new(b, s, ".mul", [&](int c) {
      ctx.add_node(OpKind::mul, ctx.tag() + ".db",
                   {{dc, Access::read, s}, {a, Access::read, s}, {c, Access::write, s}});
    });
}

}  // namespace

const OpRules mul_rules{&same_shape, &backward};

}  // namespace graphs

Tensor Graph::mul(Tensor a, Tensor b, const std::string& name) {
  // Other shapes broadcast through binary_bcast; this kind keeps its same-shape path and its bits.
  if (graphs::needs_broadcast(a, b, false)) return graphs::binary_broadcast(*this, codelets::BinaryOp::mul, a, b, name);
  return graphs::build1(*this, codelets::OpKind::mul, {{a, b}}, name);
}

}  // namespace corun
