// The plan-step decision of the input-projection pass (include/corun/input_projection.hpp). A shape-only
// cost model, not the per-width StarPU models: a decision taken from timings would let a run's bits depend on
// machine noise. The rewrite works on the forward graph; a training graph's backward is taken off and expanded
// again around it (graphs/passes/forward_rewrite.hpp), so the plan step runs it on the graph it is given.
#include <corun/input_projection.hpp>

#include "engine/pass_gain.hpp"
#include "graphs/passes/forward_rewrite.hpp"
#include "graphs/passes/stack_input_projections.hpp"

#include <cstdio>
#include <sstream>

namespace corun {
namespace {

double gemm_us(double m, double k, double n, const InputProjectionModel& p) {
  const double rate = p.peak_gflops * m / (m + p.half_rows);  // GFLOP/s = flops per ns
  return 2.0 * m * k * n / rate / 1e3;
}

double copy_us(double floats, const InputProjectionModel& p) { return floats * 8.0 / (p.copy_gbs * 1e3); }

}  // namespace

InputProjectionDecision predict_input_projection(const std::string& weight, int steps, int64_t rows, int64_t in,
                                                 int64_t recurrent, int64_t out, const InputProjectionModel& p,
                                                 bool staggered_inputs) {
  InputProjectionDecision d;
  d.weight = weight;
  d.steps = steps;
  const double T = steps, B = static_cast<double>(rows), K = static_cast<double>(in),
               R = static_cast<double>(recurrent), N = static_cast<double>(out);
  // Training runs each product three times (forward, dX = dY W^T, dW = X^T dY), stacked or per step alike,
  // and twice the copies and tasks (the backward's concat of dY and split of dX mirror the forward's).
  const double f = p.gemms_per_product, c = f > 1.0 ? 2.0 : 1.0;
  if (recurrent > 0) {
    // Per step before: concat [x_t, h] and one [B, K+R] x [K+R, N] GEMM. After: W split once, the inputs
    // stacked, one [T B, K] x [K, N] GEMM, the result split, then per step [B, R] x [R, N] and an add.
    d.separate_us = T * (c * copy_us(B * (K + R), p) + f * gemm_us(B, K + R, N, p) + 2 * c * p.task_us);
    d.stacked_us = c * (copy_us((K + R) * N, p) + copy_us(T * B * K, p) + copy_us(T * B * N, p) + 4 * p.task_us) +
                   f * gemm_us(T * B, K, N, p) +
                   T * (f * gemm_us(B, R, N, p) + c * copy_us(1.5 * B * N, p) + 2 * c * p.task_us);
  } else {
    d.separate_us = T * (f * gemm_us(B, K, N, p) + c * p.task_us);
    d.stacked_us = c * (copy_us(T * B * K, p) + copy_us(T * B * N, p) + 3 * p.task_us) + f * gemm_us(T * B, K, N, p);
  }
  d.applied = !staggered_inputs && d.stacked_us < d.separate_us * (1.0 - engine::kMinGain);
  std::ostringstream os;
  os.precision(3);
  os << steps << " steps of [" << rows << ", " << in << "] x [" << in << ", " << out << "]"
     << (recurrent > 0 ? " (concat form, W split)" : "") << ": predicted " << d.separate_us << " us separate, "
     << d.stacked_us << " us stacked -> "
     << (d.applied            ? "stacked"
         : staggered_inputs ? "kept per step (inputs come step by step from a layer below: stacking would wait "
                              "for all of it and lose the overlap across layers)"
                            : "kept per step (no 5% gain)");
  d.reason = os.str();
  return d;
}

std::vector<InputProjectionDecision> plan_input_projections(Graph& graph, const Config& config,
                                                            const InputProjectionModel& model) {
  std::vector<InputProjectionDecision> decisions;
  if (config.input_projection.has_value() && !*config.input_projection) return decisions;
  const bool force = config.input_projection.has_value();
  const passes::AcceptProjection accept = [&](const passes::ProjectionGroup& grp) {
    InputProjectionDecision d = predict_input_projection(grp.weight, grp.steps, grp.rows, grp.in, grp.recurrent,
                                                         grp.out, model, grp.staggered_inputs);
    if (force && !d.applied) {
      d.applied = true;
      d.reason += " (CORUN_INPUT_PROJECTION=on: stacked)";
    }
    if (config.verbose_passes)
      std::fprintf(stderr, "corun: input-projection pass: %s: %s\n", d.weight.c_str(), d.reason.c_str());
    decisions.push_back(d);
    return d.applied;
  };
  passes::rewrite_forward(graph, [&](Graph& forward) {
    return static_cast<int>(passes::stack_input_projections(forward, accept).size());
  });
  return decisions;
}

}  // namespace corun
