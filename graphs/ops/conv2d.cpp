// conv2d: NCHW convolution plus bias. Buffers X, W, B -> Y; i: stride, pad. dX comes from backward-data, dW
// and dB together from backward-filter (one pass over dY).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/window.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape &sx = q.in[0], &sw = q.in[1], &sb = q.in[2];
  const int64_t stride = q.i[0], pad = q.i[1];
  check_nchw(q, "X", sx);
  if (sw.rank != 4 || sw[1] != sx[1])
    q.mismatch("filters must be [K, C, R, S] with C the input's channels", "X", sx, "W", sw);
  if (sb.rank != 1 || sb[0] != sw[0]) q.mismatch("the bias must be [K], one per filter", "W", sw, "B", sb);
  if (stride < 1 || pad < 0)
    q.fail("need stride >= 1 and pad >= 0, got stride " + std::to_string(stride) + ", pad " + std::to_string(pad));
  return {
      Shape{sx[0], sw[0], out_extent(q, sx, sx[2], sw[2], stride, pad), out_extent(q, sx, sx[3], sw[3], stride, pad)}};
}

void backward(GradContext& ctx) {
  const int x = ctx.in(0), w = ctx.in(1), b = ctx.in(2), dy = ctx.grad(ctx.in(3));
  if (dy < 0) return;
  const auto& attrs = ctx.call().i;
  const Shape sy = ctx.shape(ctx.in(3)), sw = ctx.shape(w), sb = ctx.shape(b);
  if (ctx.need(0))
    ctx.contribute_new(x, ctx.shape(x), ".conv", [&](int c) {
      ctx.add_node(OpKind::conv2d_grad_data, ctx.tag() + ".dx",
                   {{dy, Access::read, sy}, {w, Access::read, sw}, {c, Access::write, ctx.shape(x)}}, attrs);
    });
  if (!ctx.need(1) && !ctx.need(2)) return;
  const int dw = ctx.new_grad_value(sw, "d" + ctx.name(w) + ".conv" + std::to_string(ctx.next_id()));
  const int db = ctx.new_grad_value(sb, "d" + ctx.name(b) + ".conv" + std::to_string(ctx.next_id()));
  ctx.add_node(
      OpKind::conv2d_grad_filter, ctx.tag() + ".dw",
      {{x, Access::read, ctx.shape(x)}, {dy, Access::read, sy}, {dw, Access::write, sw}, {db, Access::write, sb}},
      attrs);
  if (ctx.need(1)) ctx.contribute(w, dw, true);
  if (ctx.need(2)) ctx.contribute(b, db, true);
}

}  // namespace

const OpRules conv2d_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::conv2d(Tensor x, Tensor w, Tensor b, int stride, int pad, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::conv2d, {{x, w, b}, {stride, pad, 0, 0}}, name);
}

}  // namespace corun
