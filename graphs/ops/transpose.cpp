// transpose: Y = X with its dims permuted (i[0 .. rank-1] = perm, Y dim d = X dim perm[d]); the backward
// is the transpose by the inverse permutation.
#include "base/check.hpp"
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::string perm_str(const std::array<int64_t, codelets::kMaxIntAttrs>& i, int rank) {
  std::string s = "(";
  for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(i[static_cast<size_t>(d)]);
  return s + ")";
}

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape& s = q.in[0];
  std::array<bool, kMaxDims> seen{};
  std::array<int64_t, kMaxDims> out{};
  for (int d = 0; d < s.rank; ++d) {
    const int64_t p = q.i[static_cast<size_t>(d)];
    if (p < 0 || p >= s.rank || seen[static_cast<size_t>(p)])
      q.fail("perm " + perm_str(q.i, s.rank) + " is not a permutation of the " + std::to_string(s.rank) +
             " dims of X " + s.str() + " (each of 0.." + std::to_string(s.rank - 1) + " exactly once)");
    seen[static_cast<size_t>(p)] = true;
    out[static_cast<size_t>(d)] = s[static_cast<int>(p)];
  }
  return {Shape::of(out.data(), s.rank)};
}

void backward(GradContext& ctx) {
  const int x = ctx.in(0), y = ctx.in(1), dy = ctx.grad(y);
  if (dy < 0 || !ctx.need(0)) return;
  const Shape sx = ctx.shape(x), sy = ctx.shape(y);
  std::array<int64_t, codelets::kMaxIntAttrs> inverse{};
  for (int d = 0; d < sx.rank; ++d) inverse[static_cast<size_t>(ctx.call().i[static_cast<size_t>(d)])] = d;
  ctx.contribute_new(x, sx, ".transpose", [&](int c) {
    ctx.add_node(OpKind::transpose, ctx.tag(), {{dy, Access::read, sy}, {c, Access::write, sx}}, inverse);
  });
}

}  // namespace

const OpRules transpose_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::transpose(Tensor x, const std::vector<int>& perm, const std::string& name) {
  std::array<int64_t, codelets::kMaxIntAttrs> i{};
  const int rank = x.valid() ? x.shape().rank : 0;
  if (perm.empty()) {  // ONNX's default: reverse the dims
    for (int d = 0; d < rank; ++d) i[static_cast<size_t>(d)] = rank - 1 - d;
  } else {
    if (static_cast<int>(perm.size()) != rank)
      detail::fail(Status::invalid_argument, "transpose '" + impl().node_name(name, "transpose") + "': perm has " +
                                                 std::to_string(perm.size()) + " entries for X " +
                                                 (x.valid() ? x.shape().str() : std::string("(invalid)")) +
                                                 "; give one entry per dim of X");
    for (int d = 0; d < rank; ++d) i[static_cast<size_t>(d)] = perm[static_cast<size_t>(d)];
  }
  return graphs::build1(*this, codelets::OpKind::transpose, {{x}, i}, name);
}

}  // namespace corun
