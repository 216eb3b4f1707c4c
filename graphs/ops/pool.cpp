// max_pool and avg_pool: NCHW windows; attributes: PoolParams (codelets/pool/pool.hpp). max_pool's
// backward re-finds each window's first max in X; avg_pool's needs only dY. global_avg_pool is an avg_pool
// whose one window is the whole plane.
#include "codelets/pool/pool.hpp"
#include "graphs/ops/backward.hpp"
#include "graphs/ops/window.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& s = q.in[0];
  const codelets::PoolParams p = codelets::PoolParams::of(q.i);
  check_nchw(q, "X", s);
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.stride_h < 1 || p.stride_w < 1)
    q.fail("need windows and strides >= 1, got window " + std::to_string(p.kernel_h) + "x" +
           std::to_string(p.kernel_w) + ", stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w));
  for (const int64_t pad : {p.pad_top, p.pad_bottom})
    if (pad < 0 || pad >= p.kernel_h)
      q.fail("need 0 <= pad < window on each axis, got window height " + std::to_string(p.kernel_h) + ", pads " +
             std::to_string(p.pad_top) + " (top), " + std::to_string(p.pad_bottom) + " (bottom)");
  for (const int64_t pad : {p.pad_left, p.pad_right})
    if (pad < 0 || pad >= p.kernel_w)
      q.fail("need 0 <= pad < window on each axis, got window width " + std::to_string(p.kernel_w) + ", pads " +
             std::to_string(p.pad_left) + " (left), " + std::to_string(p.pad_right) + " (right)");
  return {Shape{s[0], s[1], out_extent(q, s, s[2], p.kernel_h, p.stride_h, p.pad_top, p.pad_bottom, p.ceil_mode),
                out_extent(q, s, s[3], p.kernel_w, p.stride_w, p.pad_left, p.pad_right, p.ceil_mode)}};
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

namespace {

codelets::PoolParams pool_params(const Pool2dOptions& o) {
  return codelets::PoolParams{o.kernel_h, o.kernel_w, o.stride_h,   o.stride_w,  o.pad_top,
                              o.pad_left, o.pad_bottom, o.pad_right, o.ceil_mode, o.count_include_pad};
}

}  // namespace

Tensor Graph::max_pool(Tensor x, const Pool2dOptions& options, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::max_pool, {{x}, pool_params(options).attrs()}, name);
}

Tensor Graph::avg_pool(Tensor x, const Pool2dOptions& options, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::avg_pool, {{x}, pool_params(options).attrs()}, name);
}

Tensor Graph::global_avg_pool(Tensor x, const std::string& name) {
  Pool2dOptions o;
  if (x.valid() && x.belongs_to(*this) && x.shape().rank == 4) {  // else avg_pool's checks name the problem
    o.kernel_h = static_cast<int>(x.shape()[2]);
    o.kernel_w = static_cast<int>(x.shape()[3]);
  }
  return avg_pool(x, o, name);
}

}  // namespace corun
