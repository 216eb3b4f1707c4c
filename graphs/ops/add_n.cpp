// add_n: Y = X0 + ... + Xk-1 (same shapes); every operand gets dY itself as its gradient.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

std::vector<Shape> shapes(const ShapeQuery& q) {
  if (q.in.empty()) q.fail("no operands");
  for (const Shape& s : q.in)
    if (s != q.in[0]) q.mismatch("operands must have the same shape", "first operand", q.in[0], "operand", s);
  return {q.in[0]};
}

void backward(GradContext& ctx) {
  const int k = ctx.nbuffers() - 1;
  const int dy = ctx.grad(ctx.in(k));
  if (dy < 0) return;
  for (int j = 0; j < k; ++j)  // shared, so never updated in place
    if (ctx.need(j)) ctx.contribute(ctx.in(j), dy, false);
}

}  // namespace

const OpRules add_n_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::add_n(const std::vector<Tensor>& xs, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::add_n, {xs}, name);
}

}  // namespace corun
