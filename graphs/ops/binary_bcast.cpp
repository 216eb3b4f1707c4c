// binary_bcast: C = A op B (add, sub, mul, div, pow) with numpy broadcasting; see graphs/ops/broadcast.hpp.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/broadcast.hpp"
#include "graphs/ops/rules.hpp"

#include <algorithm>

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::BinaryOp;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  if (q.i[0] < 0 || q.i[0] > static_cast<int64_t>(BinaryOp::pow))
    q.fail("unknown operation " + std::to_string(q.i[0]) + " (0 add, 1 sub, 2 mul, 3 div, 4 pow)");
  Shape out;
  if (!broadcast_shapes(q.in[0], q.in[1], out))
    q.mismatch(std::string(codelets::binary_op_name(static_cast<BinaryOp>(q.i[0]))) +
                   " needs operands of the same shape or shapes that broadcast (numpy rules: aligned from the "
                   "last dimension, each pair of extents equal or one of them 1)",
               "A", q.in[0], "B", q.in[1]);
  return {out};
}

// dX for each operand X that needs it: dC itself where the op's derivative is 1 and X is not broadcast,
// else one binary_bcast_grad node, which also does the sum over X's broadcast dims.
void backward(GradContext& ctx) {
  const int a = ctx.in(0), b = ctx.in(1), dc = ctx.grad(ctx.in(2));
  if (dc < 0) return;
  const auto op = static_cast<BinaryOp>(ctx.call().i[0]);
  const Shape sa = ctx.shape(a), sb = ctx.shape(b), sc = ctx.shape(ctx.in(2));
  for (int k = 0; k < 2; ++k) {
    if (!ctx.need(k)) continue;
    const int x = ctx.in(k);
    const Shape sx = ctx.shape(x);
    const bool identity = op == BinaryOp::add || (op == BinaryOp::sub && k == 0);
    if (identity && sx == sc) {
      ctx.contribute(x, dc, false);
      continue;
    }
    const std::string what = k == 0 ? ".da" : ".db";
    ctx.contribute_new(x, sx, what, [&](int g) {
      ctx.add_node(OpKind::binary_bcast_grad, ctx.tag() + what,
                   {{a, Access::read, sa}, {b, Access::read, sb}, {dc, Access::read, sc}, {g, Access::write, sx}},
                   {static_cast<int64_t>(op), k});
    });
  }
}

}  // namespace

const OpRules binary_bcast_rules{&shapes, &backward};

bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out) {
  const int rank = std::max(a.rank, b.rank);
  std::vector<int64_t> ext(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    const int da = a.rank - rank + d, db = b.rank - rank + d;
    const int64_t ea = da >= 0 ? a[da] : 1, eb = db >= 0 ? b[db] : 1;
    if (ea != eb && ea != 1 && eb != 1) return false;
    ext[static_cast<size_t>(d)] = ea == 1 ? eb : ea;
  }
  out = Shape::of(ext.data(), rank);
  return true;
}

bool needs_broadcast(Tensor a, Tensor b, bool bias_ok) {
  if (!a.valid() || !b.valid()) return false;  // build() reports the invalid operand
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  if (sa == sb) return false;
  return !(bias_ok && sb.rank == 1 && sa.rank > 1 && sb[0] == sa[sa.rank - 1]);
}

Tensor binary_broadcast(Graph& graph, BinaryOp op, Tensor a, Tensor b, const std::string& name) {
  return build1(graph, OpKind::binary_bcast, {{a, b}, {static_cast<int64_t>(op)}}, name);
}

}  // namespace graphs

Tensor Graph::div(Tensor a, Tensor b, const std::string& name) {
  return graphs::binary_broadcast(*this, codelets::BinaryOp::div, a, b, name);
}

Tensor Graph::pow(Tensor a, Tensor b, const std::string& name) {
  return graphs::binary_broadcast(*this, codelets::BinaryOp::pow, a, b, name);
}

}  // namespace corun
