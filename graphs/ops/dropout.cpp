// dropout (ONNX Dropout, training mode): buffers X, step, Y; f = ratio, i[0] = seed. The backward recomputes
// the mask from (seed, step, index) in dropout_grad(step, dY) instead of storing it. At inference (or
// ratio 0) the builder adds no node: the output is X itself, as ONNX defines it.
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
  if (!(q.f >= 0.0f && q.f < 1.0f))
    q.fail("ratio " + std::to_string(q.f) + " is outside [0, 1); give the probability of dropping an element");
  if (q.in[1] != Shape{1})
    q.mismatch("the step input must be [1] (the iteration number)", "X", q.in[0], "step", q.in[1]);
  return {q.in[0]};
}

void backward(GradContext& ctx) {
  const int x = ctx.in(0), step = ctx.in(1), y = ctx.in(2), dy = ctx.grad(y);
  if (dy < 0 || !ctx.need(0)) return;
  const Shape sx = ctx.shape(x);
  ctx.contribute_new(x, sx, ".dropout", [&](int c) {
    ctx.add_node(OpKind::dropout_grad, ctx.tag(),
                 {{step, Access::read, Shape{1}}, {dy, Access::read, sx}, {c, Access::write, sx}}, ctx.call().i,
                 ctx.call().f);
  });
}

}  // namespace

const OpRules dropout_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::dropout(Tensor x, float ratio, int64_t seed, bool training, Tensor step, const std::string& name) {
  const std::string node = impl().node_name(name, "dropout");
  if (!(ratio >= 0.0f && ratio < 1.0f))
    detail::fail(Status::invalid_argument, "dropout '" + node + "': ratio " + std::to_string(ratio) +
                                               " is outside [0, 1); give the probability of dropping an element");
  if (!training || ratio == 0.0f) {  // identity: no node, no copy
    if (!x.valid() || !x.belongs_to(*this))
      detail::fail(Status::invalid_argument, "dropout '" + node + "': X is not a tensor of this graph");
    return x;
  }
  if (!step.valid()) {  // the graph's shared step input: one write per iteration serves every dropout
    const auto it = impl().by_name.find(Graph::kDropoutStep);
    if (it != impl().by_name.end()) {
      step = Tensor(&impl(), it->second);
    } else {
      step = input(Graph::kDropoutStep, Shape{1});
      data(step)[0] = 0.0f;  // a fixed mask per node until someone writes the iteration number
    }
  }
  return graphs::build1(*this, codelets::OpKind::dropout, {{x, step}, {seed}, ratio}, node);
}

}  // namespace corun
