// engine/pass_gain.hpp — the plan step's decision whether a group of the parallel-op pass pays (issue 18:
// "no pass that slows a run").
//
// A group runs its members one after another on each team member, each at width 1
// (codelets/group/group.hpp). Under a policy that gives a task one core (lws, eager, dmdas) a group of six
// convolutions therefore runs on one core while the other idles: PathNet's traces showed the grouped conv,
// pool-gradient and weight-gradient tasks each as long as their six members together, on one worker, where
// the six separate tasks had run two at a time. Grouping saves only the per-task cost of the runtime. So a
// group is kept only where the per-width models predict that the grouped task is faster than its members
// as separate tasks under the team widths the running policy can give, with both estimates taken for the
// members alone on the machine's cores:
//   separate: for each width w the policy offers, the members at width w (each at most its op's max
//             width) list-scheduled longest first over cores / w teams, each paying the per-task cost;
//   grouped:  for each width w the policy offers (at most the member count), the slowest team member's
//             share of width-1 member times (split_range, as the kernel splits), plus one task cost.
// The group is kept when the best grouped time beats the best separate time by kMinGain. A group with a
// member the models know nothing about (no width measured) gets the caller's default (`when_unknown`).
#pragma once

#include <corun/engine.hpp>

#include "codelets/op.hpp"

#include <string>
#include <vector>

namespace corun::engine {

/// The team widths a task can get under the running policy, on `cores` cores.
struct TeamShape {
  int cores = 1;
  std::vector<int> widths{1};  ///< ascending; a built-in without teams: {1}; cpf/fifo NxK: {K}; corun: 1..cores
};

/// Per-width predictions of one op: µs at widths 1..max_width (index w - 1), NaN where unknown.
class OpTimes {
 public:
  virtual ~OpTimes() = default;
  virtual std::vector<double> predict(const codelets::OpCall& call, int max_width) = 0;
};

/// What the plan step decides groups by (nullptr models: every group gets the default).
struct PassModels {
  OpTimes* times = nullptr;
  TeamShape shape;
  /// The runtime's cost per task: submission, dependency release, a worker's wake-up; ~7 µs per task on
  /// the 2-core VM (bench/results/task-overhead-20261123-133250.md).
  double task_overhead_us = 7.0;
};

/// Smallest predicted relative gain that keeps a group: below it model noise could turn a gain into a loss.
inline constexpr double kMinGain = 0.05;

struct GroupDecision {
  bool apply = false;
  bool known = false;          ///< every member had a prediction
  double separate_us = 0.0;    ///< best predicted time of the members as separate tasks
  double grouped_us = 0.0;     ///< best predicted time of the group task
  int separate_width = 0;      ///< the widths those were predicted at
  int grouped_width = 0;
  std::string reason;          ///< one line, for CORUN_VERBOSE=passes
};

/// `times[i]`: member i's predictions at widths 1..shape.cores (shorter for ops with a smaller max width).
GroupDecision decide_group(const std::vector<std::vector<double>>& times, const TeamShape& shape,
                           double task_overhead_us, bool when_unknown);

/// The plan step with models: as corun::apply_graph_passes, but a group the grouping pass finds is made only
/// where decide_group keeps it when `config.grouping().by_models`. The Engine passes its StarPU history
/// models; tests pass synthetic ones.
GraphPassReport apply_graph_passes(Graph& graph, const Config& config, const PassModels* models);

}  // namespace corun::engine
