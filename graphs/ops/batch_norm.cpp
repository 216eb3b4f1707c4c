// batch_norm: ONNX BatchNormalization (opset 15). Buffers X, scale, bias, running_mean, running_var -> Y,
// mean, invstd (codelets/batch_norm). In training mode the node itself updates the running statistics in
// place (readwrite buffers): they are optimizer-style state (ValueKind::state), saved by checkpoints and
// --save with the parameters, and written by this one node once per iteration.
#include "codelets/batch_norm/batch_norm.hpp"
#include "base/check.hpp"
#include "graphs/ops/normalisation.hpp"

#include <cmath>

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sx = q.in[0];
  if (sx.rank < 2) q.fail("X must be [N, C] or [N, C, spatial...] (rank 2 to 4), got " + sx.str());
  const Shape channels{sx[1]};
  const char* labels[] = {"scale", "bias", "running_mean", "running_var"};
  for (int k = 1; k <= 4; ++k)
    if (q.in[static_cast<size_t>(k)] != channels)
      q.mismatch(std::string(labels[k - 1]) + " must be [C], one per channel of X", "X", sx, labels[k - 1],
                 q.in[static_cast<size_t>(k)]);
  if (!(q.f >= 0.0f) || !std::isfinite(q.f)) q.fail("epsilon must be finite and >= 0, got " + std::to_string(q.f));
  if (q.i[0] != 0 && codelets::BatchNormDims(sx).count() < 2)
    q.fail("training mode needs more than one value per channel (N * spatial >= 2) to estimate a variance, got X " +
           sx.str());
  return {sx, channels, channels};
}

void backward(GradContext& ctx) { normalisation_backward(ctx, OpKind::batch_norm_grad, "batch_norm", 5, ".bn"); }

// Running statistics are read (inference) or updated in place (training); they never get a gradient.
void check_running_stat(const detail::GraphImpl& g, Tensor t, bool training, const std::string& node,
                        const char* what) {
  if (!t.valid() || t.id() >= static_cast<int>(g.values.size())) return;  // build() reports it
  const detail::Value& v = g.values[static_cast<size_t>(t.id())];
  if (training) {
    CORUN_CHECK(v.kind == ValueKind::state, Status::invalid_argument,
                "batch_norm '" << node << "': training mode updates " << what << " '" << v.name
                               << "' in place, so it must be state created with Graph::state(name, {C}, fill) (not "
                                  "an input, parameter or computed value)");
    for (const detail::Node& n : g.nodes)
      for (size_t b = 0; b < n.buffers.size(); ++b)
        CORUN_CHECK(n.buffers[b] != t.id() || n.call.modes[b] == Access::read, Status::invalid_argument,
                    "batch_norm '" << node << "': " << what << " '" << v.name << "' is already updated by node '"
                                   << n.name << "'; give each training batch_norm its own running statistics");
  } else {
    CORUN_CHECK(
        v.kind != ValueKind::param, Status::invalid_argument,
        "batch_norm '" << node << "': " << what << " '" << v.name
                       << "' is a parameter; running statistics are not trained (use Graph::state or an input)");
  }
}

}  // namespace

const OpRules batch_norm_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::state(const std::string& name, const Shape& shape, float fill) {
  CORUN_CHECK(!name.empty(), Status::invalid_argument, "state: a name is required");
  CORUN_CHECK(!impl_->by_name.count(name), Status::invalid_argument,
              "state '" << name << "': the name is already used");
  CORUN_CHECK(shape.rank >= 1, Status::invalid_argument, "state '" << name << "': empty shape");
  const int id = impl_->add_value(shape, name, ValueKind::state);
  impl_->by_name[name] = id;
  float* p = impl_->values[static_cast<size_t>(id)].data.get();
  for (int64_t e = 0; e < shape.numel(); ++e) p[e] = fill;
  return Tensor(impl_.get(), id);
}

Tensor Graph::batch_norm(Tensor x, Tensor scale, Tensor bias, Tensor running_mean, Tensor running_var, float epsilon,
                         float momentum, bool training, const std::string& name) {
  detail::GraphImpl& g = impl();
  const std::string node = g.node_name(name, "batch_norm");
  CORUN_CHECK(momentum >= 0.0f && momentum <= 1.0f, Status::invalid_argument,
              "batch_norm '" << node
                             << "': momentum must be in [0, 1] (ONNX's: running = momentum * running + (1 - "
                                "momentum) * batch; PyTorch's momentum m is 1 - m), got "
                             << momentum);
  graphs::check_running_stat(g, running_mean, training, node, "running_mean");
  graphs::check_running_stat(g, running_var, training, node, "running_var");
  CORUN_CHECK(!training || running_mean != running_var, Status::invalid_argument,
              "batch_norm '" << node << "': running_mean and running_var must be two different state tensors");
  const auto outs = graphs::build(
      *this, codelets::OpKind::batch_norm,
      {{x, scale, bias, running_mean, running_var}, {training ? 1 : 0, codelets::batch_norm_encode(momentum)}, epsilon},
      node);
  if (training) {
    detail::Node& n = g.nodes.back();
    n.call.modes[3] = codelets::Access::readwrite;
    n.call.modes[4] = codelets::Access::readwrite;
  }
  graphs::name_normalisation_outputs(g, outs, node);
  return outs[0];
}

}  // namespace corun
