// conv_transpose2d: the gradient of conv2d with respect to its input, as a layer (ONNX ConvTranspose,
// DCGAN's generator). Buffers X [N,Ci,H,W], W [Ci,Co/G,R,S] (, B [Co]) -> Y [N,Co,OH,OW]; attributes:
// ConvParams plus i[11], i[12] the output padding (shape only). Its backward reuses the convolution's
// kernels with the roles swapped: dX = conv2d(dY, W), dW = conv2d_grad_filter(dY, X); dB sums dY.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/conv_window.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::ConvParams;
using codelets::OpKind;

constexpr int kOutputPadH = 11, kOutputPadW = 12;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape &sx = q.in[0], &sw = q.in[1];
  const ConvParams p = ConvParams::of(q.i);
  const int64_t oph = q.i[kOutputPadH], opw = q.i[kOutputPadW];
  check_nchw(q, "X", sx);
  check_conv_params(q, p);
  if (oph < 0 || opw < 0 || oph >= std::max(p.stride_h, p.dilation_h) || opw >= std::max(p.stride_w, p.dilation_w))
    q.fail("output padding must be >= 0 and below max(stride, dilation) of its axis, got " + std::to_string(oph) +
           "x" + std::to_string(opw));
  if (sw.rank != 4 || sw[0] != sx[1] || sw[0] % p.groups != 0)
    q.mismatch("filters must be [C_in, C_out/groups, R, S] with C_in the input's channels, a multiple of groups (" +
                   std::to_string(p.groups) + ")",
               "X", sx, "W", sw);
  const int64_t co = sw[1] * p.groups;
  if (q.in.size() == 3 && (q.in[2].rank != 1 || q.in[2][0] != co))
    q.mismatch("the bias must be [C_out] (C_out = W's dim 1 times groups)", "W", sw, "B", q.in[2]);
  const int64_t oh = (sx[2] - 1) * p.stride_h - p.pad_top - p.pad_bottom + p.dilation_h * (sw[2] - 1) + oph + 1;
  const int64_t ow = (sx[3] - 1) * p.stride_w - p.pad_left - p.pad_right + p.dilation_w * (sw[3] - 1) + opw + 1;
  if (oh < 1 || ow < 1)
    q.fail("the padding leaves no output (" + std::to_string(oh) + "x" + std::to_string(ow) + ") for X " + sx.str() +
           " and W " + sw.str() + "; use less padding");
  return {Shape{sx[0], co, oh, ow}};
}

void backward(GradContext& ctx) {
  const bool has_bias = ctx.nbuffers() == 4;
  const int x = ctx.in(0), w = ctx.in(1), y = ctx.in(has_bias ? 3 : 2), dy = ctx.grad(y);
  if (dy < 0) return;
  auto attrs = ctx.call().i;
  attrs[kOutputPadH] = attrs[kOutputPadW] = 0;  // the convolution kernels take the extents from the shapes
  const Shape sx = ctx.shape(x), sy = ctx.shape(y), sw = ctx.shape(w);
  if (ctx.need(0))
    ctx.contribute_new(x, sx, ".convT", [&](int c) {
      ctx.add_node(OpKind::conv2d, ctx.tag() + ".dx",
                   {{dy, Access::read, sy}, {w, Access::read, sw}, {c, Access::write, sx}}, attrs);
    });
  if (ctx.need(1))
    ctx.contribute_new(w, sw, ".convT", [&](int c) {
      ctx.add_node(OpKind::conv2d_grad_filter, ctx.tag() + ".dw",
                   {{dy, Access::read, sy}, {x, Access::read, sx}, {c, Access::write, sw}}, attrs);
    });
  if (has_bias && ctx.need(2)) {
    const int b = ctx.in(2);
    ctx.contribute_new(b, ctx.shape(b), ".convT", [&](int c) {
      ctx.add_node(OpKind::conv_transpose2d_grad_bias, ctx.tag() + ".db",
                   {{dy, Access::read, sy}, {c, Access::write, ctx.shape(b)}}, {});
    });
  }
}

}  // namespace

const OpRules conv_transpose2d_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::conv_transpose2d(Tensor x, Tensor w, Tensor b, const Conv2dOptions& o, const std::string& name) {
  auto attrs = graphs::conv_params(o).attrs();
  attrs[graphs::kOutputPadH] = o.output_padding_h;
  attrs[graphs::kOutputPadW] = o.output_padding_w;
  if (!b.valid()) return graphs::build1(*this, codelets::OpKind::conv_transpose2d, {{x, w}, attrs}, name);
  return graphs::build1(*this, codelets::OpKind::conv_transpose2d, {{x, w, b}, attrs}, name);
}

}  // namespace corun
