// concat: Y = the operands stacked along dimension i[0]; its backward is a split of dY.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

#include <utility>

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  if (q.in.empty()) q.fail("no operands");
  const int dim = static_cast<int>(q.i[0]);
  const Shape& s0 = q.in[0];
  q.check_dim(dim, s0);
  int64_t total = 0;
  for (const Shape& s : q.in) {
    if (s.rank != s0.rank || with_dim(s, dim, 1) != with_dim(s0, dim, 1))
      q.mismatch("extents other than dimension " + std::to_string(dim) + " differ", "first operand", s0, "operand", s);
    total += s[dim];
  }
  return {with_dim(s0, dim, total)};
}

void backward(GradContext& ctx) {
  const int k = ctx.nbuffers() - 1;
  const int dy = ctx.grad(ctx.in(k));
  if (dy < 0) return;
  std::vector<GradContext::Buf> b{{dy, Access::read, ctx.shape(ctx.in(k))}};
  std::vector<std::pair<int, int>> pieces;  // (input value, its gradient piece)
  for (int j = 0; j < k; ++j) {
    const int v = ctx.in(j);
    const int piece = ctx.new_grad_value(ctx.shape(v), "d" + ctx.name(v) + ".cat" + std::to_string(ctx.next_id()));
    b.push_back({piece, Access::write, ctx.shape(v)});
    pieces.emplace_back(v, piece);
  }
  ctx.add_node(OpKind::split, ctx.tag(), b, ctx.call().i);
  for (auto [v, piece] : pieces)
    if (ctx.needs(v)) ctx.contribute(v, piece, true);
}

}  // namespace

const OpRules concat_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::concat(const std::vector<Tensor>& xs, int dim, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::concat, {xs, {dim, 0, 0, 0}}, name);
}

}  // namespace corun
