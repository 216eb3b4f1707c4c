// corun/input_projection.hpp — the input-projection pass with its plan-step decision (issue 18 item 2).
//
// An RNN layer's per-step products x_t * W_x do not depend on the recurrence; this pass computes them as
// one GEMM over all time steps (stacked inputs) and slices, in the two forms graphs/passes/
// stack_input_projections.hpp describes (matmul(x_t, W) per step, or the LSTM's matmul(concat(x_t, h), W),
// whose W is split into W_x and W_h). The autodiff stacks the backward too: on a graph with backward, the
// backward is taken off and expanded again after the rewrite (graphs/passes/forward_rewrite.hpp), so the result
// is the graph the pass would give run before Graph::backward.
//
// It is a plan-step pass: with CORUN_INPUT_PROJECTION set (Config::input_projection, input_projection_auto) the
// engine's plan step (corun::apply_graph_passes) runs it on every graph it binds, first of its passes, and
// CORUN_VERBOSE=passes lists it with what it did. A program may still call it itself:
//
//   Graph g;  ... build the graph (with or without backward) ...
//   corun::plan_input_projections(g, corun::Config::from_env());   // CORUN_INPUT_PROJECTION=auto|on|off
//
// With auto (the default here) a group is stacked only where the cost model predicts a gain (below). The
// decision depends on the shapes alone, never on timings, the width or the policy, so a run's bits never
// depend on them either. The stacked graph's bits differ from the unstacked one's (other GEMM shapes,
// another summation order in the concat form): they agree within float rounding (docs/models.md).
#pragma once

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <string>
#include <vector>

namespace corun {

/// One group's decision.
struct InputProjectionDecision {
  std::string weight;   ///< the input weight's name
  int steps = 0;        ///< time steps (matmuls) in the group
  bool applied = false;
  double separate_us = 0.0;  ///< predicted forward time of the steps' input products as they are
  double stacked_us = 0.0;   ///< predicted forward time stacked
  std::string reason;        ///< one line; printed with CORUN_VERBOSE=passes
};

/// The cost model's constants: one core's OpenBLAS sgemm rate at M rows is peak * M / (M + half_rows)
/// (fitted to bench/small_gemm's table), a copy moves bytes at copy_gbs, and each task costs task_us.
struct InputProjectionModel {
  double peak_gflops = 105.0;  ///< sgemm on one Zen 4 core at large M (issue 18)
  /// Rows at which a [M, K] x [K, N] sgemm reaches half the peak: 32 puts batch 64 at 2/3 of it. An
  /// estimate: bench/small_gemm.sh's table refits it on a quiet machine (under load its numbers are noise).
  double half_rows = 32.0;
  double copy_gbs = 20.0;      ///< concat / split bandwidth (bytes read + written per second), cache-resident
  double task_us = 7.0;        ///< the runtime's cost per task (bench/results/task-overhead-*.md)
  /// GEMMs per product: 3 when the graph is trained (forward, dX, dW: the autodiff stacks all three), 1
  /// for an inference graph.
  double gemms_per_product = 3.0;
};

/// Predicts the group's two times with `model` (stacked must win by 5% to apply under auto). A group whose
/// inputs are staggered (made one step at a time by a recurrence below: an inner layer of a stacked RNN)
/// is never stacked under auto: stacking makes the layer wait for the whole layer below instead of
/// following it step by step, and on 2 cores that lost overlap across layers costs more than the larger
/// GEMM saves (LSTM small, every layer stacked: 1.4-1.8x slower under lws and cpf; docs/models.md).
InputProjectionDecision predict_input_projection(const std::string& weight, int steps, int64_t rows, int64_t in,
                                                 int64_t recurrent, int64_t out, const InputProjectionModel& model,
                                                 bool staggered_inputs = false);

/// Runs the pass on `graph` as config.input_projection asks: off: nothing; on: every group; auto (unset): where
/// predict_input_projection predicts a gain. On a graph with backward, that is expanded again after the rewrite
/// (refused, corun::Error, when it cannot be: passes::why_not_rewrite_forward). Returns one decision per group
/// found; prints each with its reason when config.verbose_passes.
std::vector<InputProjectionDecision> plan_input_projections(Graph& graph, const Config& config,
                                                            const InputProjectionModel& model = {});

}  // namespace corun
