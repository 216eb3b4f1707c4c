// gather (ONNX Gather): Y = X indexed along dim i[0] by idx; Y's shape is X's with that dim replaced by
// idx's dims. The gradient reaches X only (indices are integers): gather_grad, a scatter-add.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& sx = q.in[0];
  const Shape& si = q.in[1];
  const int axis = static_cast<int>(q.i[0]);
  q.check_dim(axis, sx);
  if (sx[axis] > (int64_t{1} << 24))
    q.fail("dim " + std::to_string(axis) + " of X " + sx.str() +
           " is above 2^24, the largest extent whose indices f32 holds exactly");
  // A [1] index tensor stands for ONNX's scalar index: the gathered dim is dropped.
  const bool scalar = q.i[1] != 0;
  if (scalar && !(si.rank == 1 && si[0] == 1))
    q.mismatch("a scalar index must be one element of shape [1]", "X", sx, "indices", si);
  const int rank = sx.rank - 1 + (scalar ? 0 : si.rank);
  if (rank > kMaxDims)
    q.mismatch("the result would have " + std::to_string(rank) + " dims, more than " + std::to_string(kMaxDims) +
                   "; reshape the indices to fewer dims",
               "X", sx, "indices", si);
  std::vector<int64_t> out;
  for (int d = 0; d < axis; ++d) out.push_back(sx[d]);
  if (!scalar)
    for (int d = 0; d < si.rank; ++d) out.push_back(si[d]);
  for (int d = axis + 1; d < sx.rank; ++d) out.push_back(sx[d]);
  if (out.empty()) out.push_back(1);  // a scalar result of a 1-D X is [1]
  return {Shape::of(out.data(), static_cast<int>(out.size()))};
}

void backward(GradContext& ctx) {
  const int x = ctx.in(0), idx = ctx.in(1), y = ctx.in(2), dy = ctx.grad(y);
  if (dy < 0 || !ctx.need(0)) return;
  const Shape sx = ctx.shape(x);
  ctx.contribute_new(x, sx, ".gather", [&](int c) {
    ctx.add_node(OpKind::gather_grad, ctx.tag(),
                 {{idx, Access::read, ctx.shape(idx)}, {dy, Access::read, ctx.shape(y)}, {c, Access::write, sx}},
                 ctx.call().i);
  });
}

}  // namespace

const OpRules gather_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::gather(Tensor x, Tensor indices, int axis, bool scalar_index, const std::string& name) {
  const int64_t a = axis < 0 && x.valid() && x.belongs_to(*this) ? axis + x.shape().rank : axis;
  return graphs::build1(*this, codelets::OpKind::gather, {{x, indices}, {a, scalar_index ? 1 : 0}}, name);
}

}  // namespace corun
