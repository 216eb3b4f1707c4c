// split: Y0..Yk-1 = pieces of X along dimension i[0], of the given sizes; its backward is a concat.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const int dim = static_cast<int>(q.i[0]);
  const Shape& s = q.in[0];
  q.check_dim(dim, s);
  if (q.extents.empty()) q.fail("no piece sizes given");
  int64_t total = 0;
  std::vector<Shape> outs;
  for (int64_t n : q.extents) {
    if (n <= 0) q.fail("piece sizes must be positive, got " + std::to_string(n));
    total += n;
    outs.push_back(with_dim(s, dim, n));
  }
  if (total != s[dim])
    q.mismatch(
        "piece sizes add up to " + std::to_string(total) + ", not the extent of dimension " + std::to_string(dim), "X",
        s, "pieces stacked", with_dim(s, dim, total));
  return outs;
}

void backward(GradContext& ctx) {
  const int x = ctx.in(0);
  if (!ctx.need(0)) return;
  std::vector<GradContext::Buf> b;
  bool any = false;
  for (int j = 1; j < ctx.nbuffers(); ++j) {
    const int piece = ctx.in(j);
    int dy = ctx.grad(piece);
    any = any || dy >= 0;
    if (dy < 0) dy = ctx.constant(ctx.shape(piece), 0.0f, ctx.tag() + ".zeros" + std::to_string(j));
    b.push_back({dy, Access::read, ctx.shape(piece)});
  }
  if (!any) return;
  ctx.contribute_new(x, ctx.shape(x), ".cat", [&](int c) {
    b.push_back({c, Access::write, ctx.shape(x)});
    ctx.add_node(OpKind::concat, ctx.tag(), b, ctx.call().i);
  });
}

}  // namespace

const OpRules split_rules{&shapes, &backward};

}  // namespace graphs

std::vector<Tensor> Graph::split(Tensor x, int dim, const std::vector<int64_t>& sizes, const std::string& name) {
  return graphs::build(*this, codelets::OpKind::split, {{x}, {dim, 0, 0, 0}, 0.0f, sizes}, name);
}

}  // namespace corun
