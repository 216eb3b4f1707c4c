// The table of op cases test_ops runs: every op on several shapes (odd sizes included), matmul with every
// transpose combination and accumulate on and off.
#pragma once

#include "codelets/op.hpp"

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
};

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

}  // namespace corun::codelets::testing
