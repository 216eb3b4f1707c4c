// batch_matmul: numpy / ONNX MatMul of >= 2-D operands with broadcast batch dims (i: transA, transB). The
// backward products are batch_matmul nodes whose output is the operand's shape: where the operand was
// broadcast, the kernel sums the products of the entries mapped onto it in a fixed order.
#include "base/check.hpp"
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

#include <algorithm>

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sa = q.in[0];
  const Shape& sb = q.in[1];
  if (sa.rank < 2 || sb.rank < 2) q.mismatch("operands must be at least 2-D", "A", sa, "B", sb);
  const bool ta = q.i[0] != 0, tb = q.i[1] != 0;
  const int64_t m = sa[sa.rank - (ta ? 1 : 2)], ka = sa[sa.rank - (ta ? 2 : 1)];
  const int64_t kb = sb[sb.rank - (tb ? 1 : 2)], n = sb[sb.rank - (tb ? 2 : 1)];
  if (ka != kb)
    q.mismatch("inner dimensions differ (A [..., M, K] times B [..., K, N])", ta ? "A^T of" : "A", sa,
               tb ? "B^T of" : "B", sb);
  const int rank = std::max(sa.rank, sb.rank);
  std::array<int64_t, kMaxDims> out{};
  for (int d = 0; d < rank - 2; ++d) {  // batch dims, right-aligned
    const int da = d - (rank - sa.rank), db = d - (rank - sb.rank);
    const int64_t ea = da >= 0 ? sa[da] : 1, eb = db >= 0 ? sb[db] : 1;
    if (ea != eb && ea != 1 && eb != 1)
      q.mismatch("batch dims do not broadcast (each pair must be equal or one of them 1)", "A", sa, "B", sb);
    out[static_cast<size_t>(d)] = std::max(ea, eb);
  }
  out[static_cast<size_t>(rank - 2)] = m;
  out[static_cast<size_t>(rank - 1)] = n;
  return {Shape::of(out.data(), rank)};
}

void backward(GradContext& ctx) {
  const int a = ctx.in(0), b = ctx.in(1), dc = ctx.grad(ctx.in(2));
  if (dc < 0) return;
  const bool ta = ctx.call().i[0] != 0, tb = ctx.call().i[1] != 0;
  const Shape sc = ctx.shape(ctx.in(2));
  // out = op(p) * op(q), written with p's or q's shape (summing over their broadcast batch dims).
  auto product = [&](int target, int p, bool tp, int q, bool tq) {
    const Shape st = ctx.shape(target);
    ctx.contribute_new(target, st, ".bmm", [&](int c) {
      ctx.add_node(OpKind::batch_matmul, ctx.tag(),
                   {{p, Access::read, p == dc ? sc : ctx.shape(p)},
                    {q, Access::read, q == dc ? sc : ctx.shape(q)},
                    {c, Access::write, st}},
                   {tp ? 1 : 0, tq ? 1 : 0});
    });
  };
  // C = X Y with X = op(A), Y = op(B): dX = dC Y^T, dY = X^T dC, then undo the transposes (as matmul).
  if (ctx.need(0)) ta ? product(a, b, tb, dc, true) : product(a, dc, false, b, !tb);
  if (ctx.need(1)) tb ? product(b, dc, true, a, ta) : product(b, a, !ta, dc, false);
}

}  // namespace

const OpRules batch_matmul_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::batch_matmul(Tensor a, Tensor b, const std::string& name) {
  // numpy's 1-D rules: a 1-D A is a row [1, K] and a 1-D B a column [K, 1], the added dim removed after.
  const bool mine = a.valid() && b.valid() && a.belongs_to(*this) && b.belongs_to(*this);
  if (!mine || (a.shape().rank >= 2 && b.shape().rank >= 2))
    return graphs::build1(*this, codelets::OpKind::batch_matmul, {{a, b}}, name);
  const std::string node = impl().node_name(name, "batch_matmul");
  const Shape sa = a.shape(), sb = b.shape();
  const Tensor a2 = sa.rank == 1 ? reshape(a, Shape{1, sa[0]}, node + ".a2d") : a;
  const Tensor b2 = sb.rank == 1 ? reshape(b, Shape{sb[0], 1}, node + ".b2d") : b;
  const Tensor c = graphs::build1(*this, codelets::OpKind::batch_matmul, {{a2, b2}}, node + ".nd");
  const Shape& sc = c.shape();
  std::vector<int64_t> dims(sc.dims.begin(), sc.dims.begin() + sc.rank);
  if (sb.rank == 1) dims.erase(dims.end() - 1);
  if (sa.rank == 1) dims.erase(dims.end() - (sb.rank == 1 ? 1 : 2));
  if (dims.empty()) dims.push_back(1);  // vector . vector: numpy's scalar as [1]
  return reshape(c, Shape::of(dims.data(), static_cast<int>(dims.size())), node);
}

}  // namespace corun
