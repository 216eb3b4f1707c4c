// The table of op cases test_ops runs: every op on several shapes (odd sizes included), matmul with every
// transpose combination and accumulate on and off.
#pragma once

#include "codelets/op.hpp"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace corun::codelets::testing {

struct OpCaseSpec {
  std::string name;  ///< test name suffix, e.g. "matmul_nt_65x33x17"; [A-Za-z0-9_] only
  OpCall call;
  float scale = 1.0f;  ///< inputs are uniform in [-scale, scale] (large scales probe overflow safety)
  /// Integer-valued buffers: embedding indices, phased_gate periods.
  struct IntFill {
    int buffer;
    int64_t limit;     ///< values uniform in [low, limit)
    int64_t low = 0;
  };
  std::vector<IntFill> indices;
  /// The kernel may turn an infinite input into NaN where the reference gives a finite output: Winograd's
  /// transforms subtract taps (inf - inf), where a direct convolution's -inf becomes 0 after a fused relu.
  bool infinity_may_become_nan = false;
};

/// A case of `kind` on buffers of `shapes` accessed as `modes`, with the integer attributes `i`, the float
/// attribute `f` and inputs uniform in [-scale, scale]. Shared by every op_cases*.cpp family file.
inline OpCaseSpec make(std::string name, OpKind kind, std::vector<Shape> shapes, std::vector<Access> modes,
                       std::array<int64_t, kMaxIntAttrs> i = {}, float f = 0.0f, float scale = 1.0f) {
  OpCaseSpec c;
  c.name = std::move(name);
  c.call.kind = kind;
  c.call.shapes = std::move(shapes);
  c.call.modes = std::move(modes);
  c.call.i = i;
  c.call.f = f;
  c.scale = scale;
  return c;
}

/// "65x33" for a [65, 33] shape: the shape part of case names.
inline std::string dims_str(const Shape& s) {
  std::string out;
  for (int d = 0; d < s.rank; ++d) out += (d ? "x" : "") + std::to_string(s[d]);
  return out;
}

/// All cases, in a fixed order.
std::vector<OpCaseSpec> all_op_cases();
/// The normalisation family's cases (op_cases_norm.cpp).
std::vector<OpCaseSpec> norm_op_cases();

/// Issue 19's broadcasting arithmetic, unary math and reductions over axes (op_cases_broadcast.cpp).
std::vector<OpCaseSpec> broadcast_op_cases();

/// The issue 19 optimizer updates (op_cases_optim.cpp).
std::vector<OpCaseSpec> optim_op_cases();
/// The recurrent cells' cases (op_cases_rnn.cpp).
std::vector<OpCaseSpec> rnn_op_cases();
std::vector<OpCaseSpec> conv_pool_op_cases();  ///< op_cases_conv_pool.cpp (issue 19)
/// The issue-19 shape ops (op_cases_shape.cpp).
std::vector<OpCaseSpec> shape_op_cases();
/// The oneDNN convolution kernels' cases (op_cases_dnnl.cpp), run with the oneDNN kernels forced.
std::vector<OpCaseSpec> dnnl_conv_op_cases();

}  // namespace corun::codelets::testing
