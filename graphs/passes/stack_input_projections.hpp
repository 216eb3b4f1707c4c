// graphs/passes/stack_input_projections.hpp — the input-projection pass (issue 18 item 2).
//
// An RNN layer multiplies every step's input x_t by the same weight W_x, and those products do not depend
// on the recurrence: x_t is known before the layer's first step. Computed per step they are T small GEMMs
// of B rows, each its own task; stacked, they are one GEMM of T*B rows (OpenBLAS's rate rises with the
// rows) plus a concat of the inputs and a split of the result. Two forms are recognised, per weight:
//   plain:  y_t = matmul(x_t, W)                       -> Y = matmul(concat_0(x_*), W); y_* = split_0(Y)
//   concat: y_t = matmul(concat_1(x_t, h_t), W)        -> [W_x; W_h] = split_0(W) once;
//           (the built-in LSTM's form; W = [W_x; W_h])    P = matmul(concat_0(x_*), W_x); p_* = split_0(P);
//                                                         y_t = add(p_t, matmul(h_t, W_h))
// A group is every such matmul of one weight (and, in the concat form, one split row) whose inputs x_t all
// exist before the group's first step in node order (then they cannot depend on the recurrence); a group
// whose inputs come later (a graph built step-major across layers) is left as it is. The results keep
// their value ids and names, so readers of y_t are untouched.
//
// Run it on the forward graph, before Graph::backward: the autodiff then stacks the backward too (one
// dX = dY W_x^T GEMM and one dW_x = X^T dY GEMM per layer instead of T each). The bits differ from the pass
// off (other GEMM shapes, and in the concat form another summation order): results agree within float
// rounding; with the pass on or off they never depend on the team width or the policy.
#pragma once

#include <corun/graph.hpp>

#include <functional>
#include <string>
#include <vector>

namespace corun::passes {

/// One group the pass found: `steps` matmuls of [rows, in] inputs by the [in, out] input weight.
struct ProjectionGroup {
  std::string weight;      ///< the weight value's name
  bool concat_form = false;
  int steps = 0;
  int64_t rows = 0;        ///< B: rows of each step's input
  int64_t in = 0;          ///< K of the input part (W_x's rows)
  int64_t recurrent = 0;   ///< K of the recurrent part (W_h's rows; 0 in the plain form)
  int64_t out = 0;         ///< N
  int first_node = -1;     ///< the group's first step node, before the pass
  /// The inputs come from more than one node, one step at a time (an RNN layer below): stacking makes this
  /// layer wait for the whole layer below, where per step it overlaps it (the wavefront across layers).
  bool staggered_inputs = false;
};

/// Whether to stack a group (the plan's cost model decides; nullptr: every group).
using AcceptProjection = std::function<bool(const ProjectionGroup&)>;

/// Stacks every accepted group; returns them (in node order). Refused on a graph with backward, fused or
/// grouped (corun::Error naming the fix). Groups need at least `min_steps` steps (>= 2).
std::vector<ProjectionGroup> stack_input_projections(Graph& graph, const AcceptProjection& accept,
                                                     int min_steps = 2);

}  // namespace corun::passes
