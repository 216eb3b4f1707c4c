// gru_cell: the fused GRU cell (ONNX GRU with linear_before_reset = 1, PyTorch's nn.GRU). Buffers XP [B,3H]
// (input projection), HP [B,3H] (recurrent projection with its bias), Hp [B,H] -> H, and the activated gates
// A, which only the backward reads (codelets/gru_cell/gru_cell.hpp).
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rnn_cell.hpp"
#include "graphs/ops/rules.hpp"

#include "base/check.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sx = q.in[0];
  const Shape& shp = q.in[1];
  const Shape& sh = q.in[2];
  check_cell_shapes(q, {"x_proj", sx, "the input projection"}, 3, {"h_prev", sh, "hidden state"});
  if (shp != sx)
    q.mismatch("the recurrent projection must have the input projection's shape [batch, 3 * hidden]", "x_proj",
               sx, "h_proj", shp);
  return {sh, sx};
}

void backward(GradContext& ctx) {
  const int xp = ctx.in(0), hp = ctx.in(1), hprev = ctx.in(2), h = ctx.in(3), act = ctx.in(4);
  CORUN_CHECK(ctx.grad(act) < 0, Status::invalid_argument,
              "backward: gru_cell '" << ctx.node().name << "': its saved activations (" << ctx.name(act)
                                     << ") are not differentiable; build on its h output only");
  const int dh = ctx.grad(h);
  if (dh < 0 || (!ctx.need(0) && !ctx.need(1) && !ctx.need(2))) return;
  const Shape sx = ctx.shape(xp), sh = ctx.shape(hprev);
  const int dxp = ctx.new_grad_value(sx, "d" + ctx.name(xp) + ".cell");
  const int dhp = ctx.new_grad_value(sx, "d" + ctx.name(hp) + ".cell");
  const int dhprev = ctx.new_grad_value(sh, "d" + ctx.name(hprev) + ".cell");
  ctx.add_node(OpKind::gru_cell_grad, ctx.tag(),
               {{act, Access::read, sx},
                {hp, Access::read, sx},
                {hprev, Access::read, sh},
                {dh, Access::read, sh},
                {dxp, Access::write, sx},
                {dhp, Access::write, sx},
                {dhprev, Access::write, sh}});
  if (ctx.need(0)) ctx.contribute(xp, dxp, true);
  if (ctx.need(1)) ctx.contribute(hp, dhp, true);
  if (ctx.need(2)) ctx.contribute(hprev, dhprev, true);
}

}  // namespace

const OpRules gru_cell_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::gru_cell(Tensor x_proj, Tensor h_proj, Tensor h_prev, const std::string& name) {
  detail::GraphImpl& g = impl();
  const std::string node = g.node_name(name, "gru_cell");
  const auto outs = graphs::build(*this, codelets::OpKind::gru_cell, {{x_proj, h_proj, h_prev}}, node);
  const char* suffix[] = {".h", ".act"};
  for (size_t k = 0; k < outs.size(); ++k) g.values[static_cast<size_t>(outs[k].id())].name = node + suffix[k];
  if (!g.by_name.count(node + ".h")) g.by_name[node + ".h"] = outs[0].id();
  return outs[0];
}

}  // namespace corun
