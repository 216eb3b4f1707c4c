// lstm_cell: the fused LSTM cell. Buffers Z [B,4H] (i, f, g, o pre-activations), Cp [B,H] -> C, H, and the
// activated gates A and tanh(C), which only the backward reads.
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
  const Shape& sz = q.in[0];
  const Shape& sc = q.in[1];
  check_cell_shapes(q, {"gates", sz, "gates"}, 4, {"c_prev", sc, "cell state"});
  return {sc, sc, sz, sc};
}

// grad(C) holds every contribution from C's readers outside the cell (all created later, so already
// visited); the kernel adds the path through H itself.
void backward(GradContext& ctx) {
  const int z = ctx.in(0), cp = ctx.in(1), c = ctx.in(2), h = ctx.in(3), act = ctx.in(4), tc = ctx.in(5);
  CORUN_CHECK(ctx.grad(act) < 0 && ctx.grad(tc) < 0, Status::invalid_argument,
              "backward: lstm_cell '" << ctx.node().name << "': its saved activations (" << ctx.name(act) << ", "
                                      << ctx.name(tc) << ") are not differentiable; build on its h and c outputs only");
  int dh = ctx.grad(h), dc = ctx.grad(c);
  if ((dh < 0 && dc < 0) || (!ctx.need(0) && !ctx.need(1))) return;
  const Shape sz = ctx.shape(z), sc = ctx.shape(c);
  if (dh < 0) dh = ctx.constant(sc, 0.0f, ctx.tag() + ".zero_dh");
  if (dc < 0) dc = ctx.constant(sc, 0.0f, ctx.tag() + ".zero_dc");
  const int dz = ctx.new_grad_value(sz, "d" + ctx.name(z));
  const int dcp = ctx.new_grad_value(sc, "d" + ctx.name(cp) + ".cell");
  ctx.add_node(OpKind::lstm_cell_grad, ctx.tag(),
               {{act, Access::read, sz},
                {cp, Access::read, sc},
                {tc, Access::read, sc},
                {dh, Access::read, sc},
                {dc, Access::read, sc},
                {dz, Access::write, sz},
                {dcp, Access::write, sc}});
  if (ctx.need(0)) ctx.contribute(z, dz, true);
  if (ctx.need(1)) ctx.contribute(cp, dcp, true);
}

}  // namespace

const OpRules lstm_cell_rules{&shapes, &backward};

}  // namespace graphs

std::pair<Tensor, Tensor> Graph::lstm_cell(Tensor gates, Tensor c_prev, const std::string& name) {
  detail::GraphImpl& g = impl();
  const std::string node = g.node_name(name, "lstm_cell");
  const auto outs = graphs::build(*this, codelets::OpKind::lstm_cell, {{gates, c_prev}}, node);
  const char* suffix[] = {".c", ".h", ".act", ".tanh_c"};
  for (size_t k = 0; k < outs.size(); ++k) g.values[static_cast<size_t>(outs[k].id())].name = node + suffix[k];
  for (size_t k = 0; k < 2; ++k)
    if (!g.by_name.count(node + suffix[k])) g.by_name[node + suffix[k]] = outs[k].id();
  return {outs[1], outs[0]};
}

}  // namespace corun
