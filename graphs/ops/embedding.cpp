// embedding: Y[n,:] = T[idx[n],:]. Buffers idx, T -> Y (the kernel's order; the builder takes (table,
// indices) like a matmul's (W, x)). Indices are integers: no gradient flows to them.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& si = q.in[0];
  const Shape& st = q.in[1];
  if (st.rank != 2) q.mismatch("the table must be 2-D [vocabulary, dim]", "table", st, "indices", si);
  if (st[0] > (int64_t{1} << 24))
    q.fail("a vocabulary of " + std::to_string(st[0]) +
           " rows is above 2^24, the largest whose indices f32 holds exactly; split the table");
  return {Shape{si.numel(), st[1]}};
}

void backward(GradContext& ctx) {
  const int idx = ctx.in(0), table = ctx.in(1), dy = ctx.grad(ctx.in(2));
  if (dy < 0 || !ctx.need(1)) return;
  ctx.contribute_new(table, ctx.shape(table), ".emb", [&](int c) {
    ctx.add_node(OpKind::embedding_grad, ctx.tag(),
                 {{idx, Access::read, ctx.shape(idx)},
                  {dy, Access::read, ctx.shape(ctx.in(2))},
                  {c, Access::write, ctx.shape(table)}});
  });
}

}  // namespace

const OpRules embedding_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::embedding(Tensor table, Tensor indices, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::embedding, {{indices, table}}, name);
}

}  // namespace corun
