// The backward rule and output names that batch_norm and layer_norm share (graphs/ops/normalisation.hpp).
#include "graphs/ops/normalisation.hpp"

#include "base/check.hpp"

namespace corun::graphs {

void normalisation_backward(GradContext& ctx, codelets::OpKind grad_kind, const char* op, int first_output,
                            const char* name_suffix) {
  using codelets::Access;
  const int x = ctx.in(0), scale = ctx.in(1), bias = ctx.in(2);
  const int y = ctx.in(first_output), mean = ctx.in(first_output + 1), invstd = ctx.in(first_output + 2);
  if (ctx.grad(mean) >= 0 || ctx.grad(invstd) >= 0)
    detail::fail(Status::invalid_argument, std::string("backward: ") + op + " '" + ctx.node().name +
                                               "': the loss depends on its saved mean or invstd output, which "
                                               "have no gradient rule; use Y only");
  const int dy = ctx.grad(y);
  if (dy < 0) return;
  const Shape sx = ctx.shape(x), sc = ctx.shape(scale), stats = ctx.shape(mean);
  const int dx = ctx.new_grad_value(sx, "d" + ctx.name(x) + name_suffix + std::to_string(ctx.next_id()));
  const int ds = ctx.new_grad_value(sc, "d" + ctx.name(scale) + name_suffix + std::to_string(ctx.next_id()));
  const int db = ctx.new_grad_value(sc, "d" + ctx.name(bias) + name_suffix + std::to_string(ctx.next_id()));
  ctx.add_node(grad_kind, ctx.tag(),
               {{x, Access::read, sx},
                {scale, Access::read, sc},
                {mean, Access::read, stats},
                {invstd, Access::read, stats},
                {dy, Access::read, sx},
                {dx, Access::write, sx},
                {ds, Access::write, sc},
                {db, Access::write, sc}},
               ctx.call().i, ctx.call().f);
  if (ctx.need(0)) ctx.contribute(x, dx, true);
  if (ctx.need(1)) ctx.contribute(scale, ds, true);
  if (ctx.need(2)) ctx.contribute(bias, db, true);
}

void name_normalisation_outputs(detail::GraphImpl& g, const std::vector<Tensor>& outs, const std::string& node) {
  const char* suffix[] = {"", ".mean", ".invstd"};
  for (size_t k = 0; k < outs.size(); ++k) {
    g.values[static_cast<size_t>(outs[k].id())].name = node + suffix[k];
    if (!g.by_name.count(node + suffix[k])) g.by_name[node + suffix[k]] = outs[k].id();
  }
}

}  // namespace corun::graphs
