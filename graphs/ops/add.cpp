// add: C = A + B, B of A's shape or a bias over A's last extent (1-D, broadcast over the rows).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/broadcast.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sa = q.in[0];
  const Shape& sb = q.in[1];
  const bool bias = sb.rank == 1 && sb[0] == sa[sa.rank - 1] && sa.rank > 1;
  if (sa != sb && !bias) q.mismatch("B must have A's shape or be 1-D of A's last extent", "A", sa, "B", sb);
  return {sa};
}

void backward(GradContext& ctx) {
  const int a = ctx.in(0), b = ctx.in(1), dc = ctx.grad(ctx.in(2));
  if (dc < 0) return;
  if (ctx.need(0)) ctx.contribute(a, dc, false);
  if (!ctx.need(1)) return;
  const Shape sa = ctx.shape(a);
  const Shape sb = ctx.shape(b);
  if (sb == sa) return ctx.contribute(b, dc, false);
  // A bias: sum dC over all rows, viewed as [rows, N].
  const int64_t cols = sb[0];
  ctx.contribute_new(b, sb, ".bias", [&](int c) {
    ctx.add_node(OpKind::sum, ctx.tag() + ".db",
                 {{dc, Access::read, Shape{sa.numel() / cols, cols}}, {c, Access::write, sb}}, {0, 0, 0, 0}, 1.0f);
  });
}

}  // namespace

const OpRules add_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::add(Tensor a, Tensor b, const std::string& name) {
  // Other shapes broadcast through binary_bcast; this kind keeps its same-shape path and its bits.
  if (graphs::needs_broadcast(a, b, true)) return graphs::binary_broadcast(*this, codelets::BinaryOp::add, a, b, name);
  return graphs::build1(*this, codelets::OpKind::add, {{a, b}}, name);
}

}  // namespace corun
