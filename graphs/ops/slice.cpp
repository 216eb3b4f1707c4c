// slice: Y = X[.., i[1] : i[1] + i[2], ..] along dimension i[0]; its backward places dY in zeros.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

std::vector<Shape> shapes(const ShapeQuery& q) {
  const int dim = static_cast<int>(q.i[0]);
  const int64_t start = q.i[1], len = q.i[2];
  const Shape& s = q.in[0];
  q.check_dim(dim, s);
  if (start < 0 || len <= 0 || start + len > s[dim])
    q.fail("range [" + std::to_string(start) + ", " + std::to_string(start + len) + ") is outside dimension " +
           std::to_string(dim) + " of X " + s.str());
  return {with_dim(s, dim, len)};
}

void backward(GradContext& ctx) {
  ctx.dx_from_dy(codelets::OpKind::slice_grad, ".slice");
}

}  // namespace

const OpRules slice_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::slice(Tensor x, int dim, int64_t start, int64_t len, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::slice, {{x}, {dim, start, len, 0}}, name);
}

}  // namespace corun
