// matmul: C = op(A) * op(B) (i: transA, transB; the backward's accumulating form sets i[2]).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sa = q.in[0];
  const Shape& sb = q.in[1];
  if (sa.rank != 2 || sb.rank != 2) q.mismatch("operands must be 2-D", "A", sa, "B", sb);
  const bool ta = q.i[0] != 0, tb = q.i[1] != 0;
  const int64_t m = ta ? sa[1] : sa[0];
  const int64_t ka = ta ? sa[0] : sa[1];
  const int64_t kb = tb ? sb[1] : sb[0];
  const int64_t n = tb ? sb[0] : sb[1];
  if (ka != kb) q.mismatch("inner dimensions differ", ta ? "A^T of" : "A", sa, tb ? "B^T of" : "B", sb);
  return {Shape{m, n}};
}

void backward(GradContext& ctx) {
  const int a = ctx.in(0), b = ctx.in(1), dc = ctx.grad(ctx.in(2));
  if (dc < 0) return;
  const bool ta = ctx.call().i[0] != 0, tb = ctx.call().i[1] != 0;
  // C = X Y with X = op(A), Y = op(B): dX = dC Y^T, dY = X^T dC, then undo the transposes.
  if (ctx.need(0)) ta ? ctx.contribute_matmul(a, b, tb, dc, true) : ctx.contribute_matmul(a, dc, false, b, !tb);
  if (ctx.need(1)) tb ? ctx.contribute_matmul(b, dc, true, a, ta) : ctx.contribute_matmul(b, a, !ta, dc, false);
}

}  // namespace

const OpRules matmul_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::matmul(Tensor a, Tensor b, bool trans_a, bool trans_b, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::matmul, {{a, b}, {trans_a, trans_b, 0, 0}}, name);
}

}  // namespace corun
