// conv2d: NCHW convolution with an optional bias. Buffers X, W (, B) -> Y; attributes: ConvParams
// (codelets/conv2d/conv2d.hpp). dX comes from backward-data, dW and dB together from backward-filter (one
// pass over dY).
#include "codelets/conv2d/conv2d.hpp"
#include "graphs/ops/backward.hpp"
#include "graphs/ops/conv_window.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::ConvParams;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape &sx = q.in[0], &sw = q.in[1];
  const ConvParams p = ConvParams::of(q.i);
  check_nchw(q, "X", sx);
  check_conv_params(q, p);
  if (sx[1] % p.groups != 0)
    q.fail("the input's " + std::to_string(sx[1]) + " channels do not divide into " + std::to_string(p.groups) +
           " groups (X " + sx.str() + ")");
  if (sw.rank != 4 || sw[1] * p.groups != sx[1] || sw[0] % p.groups != 0)
    q.mismatch("filters must be [K, C/groups, R, S] with C the input's channels and K a multiple of groups (" +
                   std::to_string(p.groups) + ")",
               "X", sx, "W", sw);
  if (q.in.size() == 3 && (q.in[2].rank != 1 || q.in[2][0] != sw[0]))
    q.mismatch("the bias must be [K], one per filter", "W", sw, "B", q.in[2]);
  const int64_t rh = p.dilation_h * (sw[2] - 1) + 1, rw = p.dilation_w * (sw[3] - 1) + 1;
  return {Shape{sx[0], sw[0], out_extent(q, sx, sx[2], rh, p.stride_h, p.pad_top, p.pad_bottom),
                out_extent(q, sx, sx[3], rw, p.stride_w, p.pad_left, p.pad_right)}};
}

void backward(GradContext& ctx) {
  const bool has_bias = ctx.nbuffers() == 4;
  const int x = ctx.in(0), w = ctx.in(1), y = ctx.in(has_bias ? 3 : 2), dy = ctx.grad(y);
  if (dy < 0) return;
  const auto& attrs = ctx.call().i;
  const Shape sy = ctx.shape(y), sw = ctx.shape(w);
  if (ctx.need(0))
    ctx.contribute_new(x, ctx.shape(x), ".conv", [&](int c) {
      ctx.add_node(OpKind::conv2d_grad_data, ctx.tag() + ".dx",
                   {{dy, Access::read, sy}, {w, Access::read, sw}, {c, Access::write, ctx.shape(x)}}, attrs);
    });
  const bool need_b = has_bias && ctx.need(2);
  if (!ctx.need(1) && !need_b) return;
  const int dw = ctx.new_grad_value(sw, "d" + ctx.name(w) + ".conv" + std::to_string(ctx.next_id()));
  std::vector<GradContext::Buf> bufs{
      {x, Access::read, ctx.shape(x)}, {dy, Access::read, sy}, {dw, Access::write, sw}};
  int db = -1;
  if (has_bias) {
    const int b = ctx.in(2);
    db = ctx.new_grad_value(ctx.shape(b), "d" + ctx.name(b) + ".conv" + std::to_string(ctx.next_id()));
    bufs.push_back({db, Access::write, ctx.shape(b)});
  }
  ctx.add_node(OpKind::conv2d_grad_filter, ctx.tag() + ".dw", bufs, attrs);
  if (ctx.need(1)) ctx.contribute(w, dw, true);
  if (need_b) ctx.contribute(ctx.in(2), db, true);
}

}  // namespace

const OpRules conv2d_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::conv2d(Tensor x, Tensor w, Tensor b, int stride, int pad, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::conv2d, {{x, w, b}, {stride, pad, 0, 0}}, name);
}

Tensor Graph::conv2d(Tensor x, Tensor w, Tensor b, const Conv2dOptions& o, const std::string& name) {
  const auto attrs = graphs::conv_params(o).attrs();
  if (!b.valid()) return graphs::build1(*this, codelets::OpKind::conv2d, {{x, w}, attrs}, name);
  return graphs::build1(*this, codelets::OpKind::conv2d, {{x, w, b}, attrs}, name);
}

}  // namespace corun
