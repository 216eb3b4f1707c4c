// layer_norm: ONNX LayerNormalization (opset 17). Buffers X, scale, bias -> Y, mean, invstd
// (codelets/layer_norm); i[0] is the first normalised axis (>= 0), f epsilon.
#include "codelets/layer_norm/layer_norm.hpp"
#include "base/check.hpp"
#include "graphs/ops/normalisation.hpp"

#include <cmath>

namespace corun {
namespace graphs {
namespace {

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

void backward(GradContext& ctx) { normalisation_backward(ctx, OpKind::layer_norm_grad, "layer_norm", 3, ".ln"); }

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
  graphs::name_normalisation_outputs(g, outs, node);
  return outs[0];
}

}  // namespace corun
