// layer_norm: ONNX LayerNormalization (opset 17). Buffers X, scale, bias -> Y, mean, invstd
// (codelets/layer_norm); i[0] is the first normalised axis (>= 0), f epsilon.
#include "codelets/layer_norm/layer_norm.hpp"
#include "base/check.hpp"
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

#include <cmath>

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sx = q.in[0];
  const int axis = static_cast<int>(q.i[0]);
  q.check_dim(axis, sx);
  Shape normalised;
  normalised.rank = sx.rank - axis;
  for (int d = axis; d < sx.rank; ++d) normalised.dims[static_cast<size_t>(d - axis)] = sx[d];
  if (q.in[1] != normalised)
    q.mismatch("scale must have the normalised shape (X's extents from axis " + std::to_string(axis) + " on)", "X", sx,
               "scale", q.in[1]);
  if (q.in[2] != normalised)
    q.mismatch("bias must have the normalised shape (X's extents from axis " + std::to_string(axis) + " on)", "X", sx,
               "bias", q.in[2]);
  if (!(q.f >= 0.0f) || !std::isfinite(q.f)) q.fail("epsilon must be finite and >= 0, got " + std::to_string(q.f));
  const Shape rows{codelets::LayerNormDims(sx, axis).rows};
  return {sx, rows, rows};
}

void backward(GradContext& ctx) {
  const int x = ctx.in(0), scale = ctx.in(1), bias = ctx.in(2);
  if (ctx.grad(ctx.in(4)) >= 0 || ctx.grad(ctx.in(5)) >= 0)
    detail::fail(Status::invalid_argument, "backward: layer_norm '" + ctx.node().name +
                                               "': the loss depends on its saved mean or invstd output, which "
                                               "have no gradient rule; use Y only");
  const int dy = ctx.grad(ctx.in(3));
  if (dy < 0) return;
  const Shape sx = ctx.shape(x), sc = ctx.shape(scale), sr = ctx.shape(ctx.in(4));
  const int dx = ctx.new_grad_value(sx, "d" + ctx.name(x) + ".ln" + std::to_string(ctx.next_id()));
  const int ds = ctx.new_grad_value(sc, "d" + ctx.name(scale) + ".ln" + std::to_string(ctx.next_id()));
  const int db = ctx.new_grad_value(sc, "d" + ctx.name(bias) + ".ln" + std::to_string(ctx.next_id()));
  ctx.add_node(OpKind::layer_norm_grad, ctx.tag(),
               {{x, Access::read, sx},
                {scale, Access::read, sc},
                {ctx.in(4), Access::read, sr},
                {ctx.in(5), Access::read, sr},
                {dy, Access::read, sx},
                {dx, Access::write, sx},
                {ds, Access::write, sc},
                {db, Access::write, sc}},
               ctx.call().i, ctx.call().f);
  if (ctx.need(0)) ctx.contribute(x, dx, true);
  if (ctx.need(1)) ctx.contribute(scale, ds, true);
  if (ctx.need(2)) ctx.contribute(bias, db, true);
}

}  // namespace

const OpRules layer_norm_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::layer_norm(Tensor x, Tensor scale, Tensor bias, int axis, float epsilon, const std::string& name) {
  detail::GraphImpl& g = impl();
  const std::string node = g.node_name(name, "layer_norm");
  const int rank = x.valid() ? x.shape().rank : 0;
  CORUN_CHECK(axis >= -rank && axis < rank, Status::invalid_argument,
              "layer_norm '" << node << "': axis " << axis << " is out of range for X of rank " << rank
                             << " (use -rank .. rank-1; -1 normalises the last dimension)");
  const int64_t a = axis < 0 ? axis + rank : axis;
  const auto outs = graphs::build(*this, codelets::OpKind::layer_norm, {{x, scale, bias}, {a}, epsilon}, node);
  const char* suffix[] = {"", ".mean", ".invstd"};
  for (size_t k = 0; k < outs.size(); ++k) {
    g.values[static_cast<size_t>(outs[k].id())].name = node + suffix[k];
    if (!g.by_name.count(node + suffix[k])) g.by_name[node + suffix[k]] = outs[k].id();
  }
  return outs[0];
}

}  // namespace corun
