// softmax and log_softmax along dim i[0] (ONNX opset 13 Softmax / LogSoftmax); both backward rules read
// the forward output Y: softmax_grad(Y, dY), log_softmax_grad(Y, dY).
#include "base/check.hpp"
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  q.check_dim(static_cast<int>(q.i[0]), q.in[0]);
  return {q.in[0]};
}

void softmax_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::softmax_grad, true);
}

void log_softmax_backward(GradContext& ctx) {
  ctx.unary_elementwise(OpKind::log_softmax_grad, true);
}

// ONNX and PyTorch count a negative axis from the end.
int64_t normalised_axis(const Graph& g, Tensor x, int axis) {
  if (axis < 0 && x.valid() && x.belongs_to(g)) return axis + x.shape().rank;
  return axis;
}

}  // namespace

const OpRules softmax_rules{&shapes, &softmax_backward};
const OpRules log_softmax_rules{&shapes, &log_softmax_backward};

}  // namespace graphs

Tensor Graph::softmax(Tensor x, int axis, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::softmax, {{x}, {graphs::normalised_axis(*this, x, axis)}}, name);
}

Tensor Graph::log_softmax(Tensor x, int axis, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::log_softmax, {{x}, {graphs::normalised_axis(*this, x, axis)}}, name);
}

}  // namespace corun
