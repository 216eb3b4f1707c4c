// Op cases of issue 19's broadcasting family: binary_bcast and its gradient on broadcasting shape pairs,
// reduce_axes and its gradient on several axis sets, the unary math ops and clip, and ew_chain programs of
// the chainable ones. Inputs outside an op's domain (log, sqrt, pow's base, div's divisor) are positive
// integers (IntFill), so fast and reference compare finite numbers.
#include "op_cases.hpp"

#include "codelets/broadcast/broadcast.hpp"
#include "codelets/unary_math/unary_math.hpp"

#include <utility>

namespace corun::codelets::testing {
namespace {

using Shapes = std::vector<Shape>;

constexpr Access R = Access::read;
constexpr Access W = Access::write;

// {A, B, C}: the examples, a bias, outer products, a 4-D channel scale, same shapes and a large one.
const Shapes kPairs[] = {
    {Shape{2, 3, 4}, Shape{3, 1}, Shape{2, 3, 4}},    {Shape{1}, Shape{5, 7}, Shape{5, 7}},
    {Shape{4, 1, 6}, Shape{1, 5, 1}, Shape{4, 5, 6}}, {Shape{65, 127}, Shape{127}, Shape{65, 127}},
    {Shape{17, 1}, Shape{1, 33}, Shape{17, 33}},      {Shape{2, 3, 17, 5}, Shape{3, 1, 1}, Shape{2, 3, 17, 5}},
    {Shape{3, 33}, Shape{3, 33}, Shape{3, 33}},       {Shape{64, 33, 17}, Shape{33, 1}, Shape{64, 33, 17}},
};

void binary_bcast_cases(std::vector<OpCaseSpec>& out) {
  for (int op = 0; op <= static_cast<int>(BinaryOp::pow); ++op) {
    const std::string opname = binary_op_name(static_cast<BinaryOp>(op));
    for (const Shapes& p : kPairs) {
      const std::string shapes = dims_str(p[0]) + "_" + dims_str(p[1]);
      std::vector<OpCaseSpec::IntFill> fills;
      if (op == static_cast<int>(BinaryOp::div)) fills = {{1, 10, 1}};  // divisors 1..9
      if (op == static_cast<int>(BinaryOp::pow)) fills = {{0, 10, 1}};  // bases 1..9, exponents in [-1, 1]
      OpCaseSpec c = make("binary_bcast_" + opname + "_" + shapes, OpKind::binary_bcast, p, {R, R, W}, {op});
      c.indices = fills;
      out.push_back(std::move(c));
      for (int k = 0; k < 2; ++k) {
        OpCaseSpec g = make("binary_bcast_grad_" + opname + (k ? "_db_" : "_da_") + shapes, OpKind::binary_bcast_grad,
                            {p[0], p[1], p[2], p[static_cast<size_t>(k)]}, {R, R, R, W}, {op, k});
        g.indices = fills;
        out.push_back(std::move(g));
      }
    }
  }
  // pow's gradients where the base or the exponent is 0 (PyTorch: 0 there, not NaN): bases 0..3, exponents
  // 0..2.
  const Shapes p = kPairs[2];
  for (int k = 0; k < 2; ++k) {
    OpCaseSpec g =
        make(std::string("binary_bcast_grad_pow_zeros_") + (k ? "db" : "da"), OpKind::binary_bcast_grad,
             {p[0], p[1], p[2], p[static_cast<size_t>(k)]}, {R, R, R, W}, {static_cast<int>(BinaryOp::pow), k});
    g.indices = {{0, 4, 0}, {1, 3, 0}};
    out.push_back(std::move(g));
  }
}

// X, its reduced-axes mask, and Y's element count.
struct Reduction {
  Shape x;
  int64_t mask;
};

void reduce_axes_cases(std::vector<OpCaseSpec>& out) {
  const Reduction cases[] = {{Shape{2, 3, 4}, 0b010},      {Shape{2, 3, 4}, 0b101},      {Shape{2, 3, 4}, 0b111},
                             {Shape{2, 3, 17, 5}, 0b1100}, {Shape{2, 3, 17, 5}, 0b0001}, {Shape{2, 3, 17, 5}, 0b1010},
                             {Shape{65, 127}, 0b01},       {Shape{65, 127}, 0b10},       {Shape{4099}, 0b1},
                             {Shape{7, 1, 9}, 0b010},      {Shape{40, 64, 33}, 0b011}};
  for (const Reduction& r : cases) {
    int64_t kept = 1, count = 1;
    for (int d = 0; d < r.x.rank; ++d) ((r.mask >> d) & 1 ? count : kept) *= r.x[d];
    const Shape y{kept};
    const std::string name = dims_str(r.x) + "_m" + std::to_string(r.mask);
    for (const bool mean : {false, true}) {
      if (mean && count == 1) continue;  // the same case again
      const float f = mean ? 1.0f / static_cast<float>(count) : 1.0f;
      const std::string suffix = mean ? "_mean" : "";
      out.push_back(make("reduce_axes_" + name + suffix, OpKind::reduce_axes, {r.x, y}, {R, W}, {r.mask}, f));
      out.push_back(make("reduce_axes_grad_" + name + suffix, OpKind::reduce_axes_grad, {y, r.x}, {R, W}, {r.mask}, f));
    }
  }
}

// One element, an odd row-split 2-D shape and an odd 4-D one: the formulas are the shared elementwise loops
// (their splits are covered by the chainable ops of op_cases.cpp), so three shapes keep the cases cheap.
const Shapes kElementwise = {Shape{1}, Shape{65, 127}, Shape{2, 3, 17, 5}};

// `inputs` read buffers then one output, all of one shape; `positive`: buffer 0 holds integers 1..99.
void unary_cases(std::vector<OpCaseSpec>& out, OpKind kind, int inputs, bool positive, float scale = 1.0f,
                 const char* suffix = "") {
  for (const Shape& s : kElementwise) {
    std::vector<Access> modes(static_cast<size_t>(inputs), R);
    modes.push_back(W);
    OpCaseSpec c = make(std::string(op_info(kind).name) + "_" + dims_str(s) + suffix, kind,
                        Shapes(static_cast<size_t>(inputs + 1), s), modes, {}, 0.0f, scale);
    if (positive) c.indices = {{0, 100, 1}};
    out.push_back(std::move(c));
  }
}

void unary_math_cases(std::vector<OpCaseSpec>& out) {
  unary_cases(out, OpKind::sqrt, 1, true);
  unary_cases(out, OpKind::sqrt_grad, 2, true);
  unary_cases(out, OpKind::erf, 1, false);
  unary_cases(out, OpKind::erf, 1, false, 200.0f, "_large");
  unary_cases(out, OpKind::erf_grad, 2, false, 30.0f, "_large");
  unary_cases(out, OpKind::erf_grad, 2, false);
  unary_cases(out, OpKind::exp, 1, false, 30.0f);
  unary_cases(out, OpKind::exp_grad, 2, false);
  unary_cases(out, OpKind::log, 1, true);
  unary_cases(out, OpKind::log_grad, 2, true);
  unary_cases(out, OpKind::neg, 1, false);
  unary_cases(out, OpKind::abs, 1, false);
  unary_cases(out, OpKind::abs_grad, 2, false);
  unary_cases(out, OpKind::reciprocal, 1, true);
  unary_cases(out, OpKind::reciprocal, 1, false, 1.0f, "_signed");
  unary_cases(out, OpKind::reciprocal_grad, 2, false);
  // clip as ReLU6 on [-10, 10], a narrow window, and lo > hi (every element hi, as ONNX and torch).
  const float bounds[][2] = {{0.0f, 6.0f}, {-0.5f, 0.25f}, {1.0f, -1.0f}};
  const char* names[] = {"relu6", "narrow", "crossed"};
  for (int k = 0; k < 3; ++k)
    for (const Shape& s : kElementwise) {
      const std::array<int64_t, kMaxIntAttrs> i{float_attr_bits(bounds[k][0]), float_attr_bits(bounds[k][1])};
      const std::string name = std::string(names[k]) + "_" + dims_str(s);
      out.push_back(make("clip_" + name, OpKind::clip, {s, s}, {R, W}, i, 0.0f, 10.0f));
      out.push_back(make("clip_grad_" + name, OpKind::clip_grad, {s, s, s}, {R, R, W}, i, 0.0f, 10.0f));
    }
}

// ew_chain programs through the new chainable ops: sqrt(exp(x0) + |x1|) and its gradient pieces, and
// erf, log, neg, reciprocal and their gradients in one chain.
void ew_chain_math_cases(std::vector<OpCaseSpec>& out) {
  auto op = [](OpKind k) { return static_cast<int32_t>(k); };
  const std::vector<int32_t> programs[] = {
      {op(OpKind::exp),       0, -1, op(OpKind::abs),      1, -1, op(OpKind::add),      2, 3, op(OpKind::sqrt), 4, -1,
       op(OpKind::sqrt_grad), 5, 1,  op(OpKind::exp_grad), 2, 6,  op(OpKind::abs_grad), 1, 7},
      {op(OpKind::abs),
       0,
       -1,
       op(OpKind::exp),
       2,
       -1,
       op(OpKind::log),
       3,
       -1,
       op(OpKind::erf),
       4,
       -1,
       op(OpKind::neg),
       5,
       -1,
       op(OpKind::reciprocal),
       3,
       -1,
       op(OpKind::reciprocal_grad),
       7,
       6,
       op(OpKind::log_grad),
       3,
       8,
       op(OpKind::erf_grad),
       9,
       1,
       op(OpKind::mul),
       10,
       6},
  };
  const char* names[] = {"sqrt_exp_abs", "erf_log_neg_reciprocal"};
  for (int k = 0; k < 2; ++k)
    for (const Shape& s : kElementwise) {
      OpCaseSpec c =
          make(std::string("ew_chain_") + names[k] + "_" + dims_str(s), OpKind::ew_chain, {s, s, s}, {R, R, W});
      c.call.program = programs[k];
      out.push_back(std::move(c));
    }
}

}  // namespace

std::vector<OpCaseSpec> broadcast_op_cases() {
  std::vector<OpCaseSpec> out;
  binary_bcast_cases(out);
  reduce_axes_cases(out);
  unary_math_cases(out);
  ew_chain_math_cases(out);
  return out;
}

}  // namespace corun::codelets::testing
