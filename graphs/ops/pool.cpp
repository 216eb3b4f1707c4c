// max_pool and avg_pool: NCHW windows; i: kernel, stride, pad. max_pool's backward re-finds each window's
// first max in X; avg_pool's needs only dY.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/window.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& s = q.in[0];
  const int64_t window = q.i[0], stride = q.i[1], pad = q.i[2];
  check_nchw(q, "X", s);
  if (window < 1 || stride < 1 || pad < 0 || pad >= window)
    q.fail("need window >= 1, stride >= 1 and 0 <= pad < window, got window " + std::to_string(window) + ", stride " +
           std::to_string(stride) + ", pad " + std::to_string(pad));
  return {Shape{s[0], s[1], out_extent(q, s, s[2], window, stride, pad), out_extent(q, s, s[3], window, stride, pad)}};
}

void max_pool_backward(GradContext& ctx) {
  const int x = ctx.in(0), dy = ctx.grad(ctx.in(1));
  if (dy < 0 || !ctx.need(0)) return;
  const Shape sx = ctx.shape(x), sy = ctx.shape(ctx.in(1));
  ctx.contribute_new(x, sx, ".pool", [&](int c) {
    ctx.add_node(OpKind::max_pool_grad, ctx.tag(),
                 {{x, Access::read, sx}, {dy, Access::read, sy}, {c, Access::write, sx}}, ctx.call().i);
  });
}

void avg_pool_backward(GradContext& ctx) {
  ctx.dx_from_dy(OpKind::avg_pool_grad, ".pool");
}

}  // namespace

const OpRules max_pool_rules{&shapes, &max_pool_backward};
const OpRules avg_pool_rules{&shapes, &avg_pool_backward};

}  // namespace graphs

Tensor Graph::max_pool(Tensor x, int kernel, int stride, int pad, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::max_pool, {{x}, {kernel, stride, pad, 0}}, name);
}

Tensor Graph::avg_pool(Tensor x, int kernel, int stride, int pad, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::avg_pool, {{x}, {kernel, stride, pad, 0}}, name);
}

}  // namespace corun
