// sched/planner/interference.hpp — the paper's interference feedback (section III-D, "Discussion"): the
// performance model predicts each op alone, so two ops that slow each other down when co-running go
// unnoticed by Strategy 3. The runtime records such cases and stops co-running those ops in later steps.
//
// InterferenceDetector turns measurements into pairs of op kinds for CorunPlanner::forbid_corun. An
// observation counts as one slowdown event for every distinct co-running kind when the op took at least
// `slowdown` times its prediction; a pair (a <= b) is reported once it has `min_events` events and they
// are at least `min_share` of the pair's co-run observations, so noise (page faults, a preempted thread,
// a shared VM) does not forbid a pair forever: only a pair that is slowed down most times it co-runs. Observations without a
// usable prediction (NaN, <= 0) or without co-runners are ignored (nothing to blame), and so are negative
// kinds (-1: "never conflicts", as in CorunTask). Plain C++, deterministic.
//
// Co-tenancy (issue 21 item 7): on a machine shared with other processes every op runs slower than its
// model, alone or not, so "1.5x the prediction" blamed pairs for the neighbours' load: on the loaded 2-core
// VM eight LSTM pairs were forbidden within two steps and the policy ran half its ops one at a time (2x
// lws). With a `baseline_window` > 0 the slowdown is measured against the machine's current one instead:
// the median measured/predicted ratio of the last `baseline_window` observations, co-run or alone (floored
// at 1; no verdict before half the window is filled). A uniform load raises the median with every op, so
// no pair stands out; a pair that really slows itself down still measures `slowdown` x above the rest. The
// corun adapter also feeds thread CPU time rather than wall time (corun_policy.cpp).
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <utility>
#include <vector>

namespace corun::sched {

struct CorunObservation {
  int kind = -1;                     ///< the measured op's kind
  double predicted = 0.0;            ///< its predicted time (alone, at its width)
  double measured = 0.0;             ///< its measured time, same unit
  std::vector<int> corunning_kinds;  ///< kinds of the ops that ran beside it (duplicates count once)
};

class InterferenceDetector {
 public:
  /// Throws corun::Error unless `slowdown` >= 1 (finite), `min_events` >= 1, 0 <= `min_share` <= 1 and
  /// `baseline_window` >= 0 (0: slowdowns are against the prediction alone, as the paper does).
  explicit InterferenceDetector(double slowdown = 1.5, int min_events = 2, double min_share = 0.0,
                                int baseline_window = 0);

  /// Every finished op with a prediction may be observed: one without co-runners only feeds the baseline.
  void observe(const CorunObservation& observation);
  /// The machine's current slowdown: median measured/predicted of the baseline window, at least 1 (1 when
  /// the window is off or empty).
  double baseline() const;
  /// The pairs (a <= b) seen slowed by >= slowdown x predicted at least min_events times and in at least
  /// min_share of their observations, sorted.
  std::vector<std::pair<int, int>> pairs() const;

 private:
  double slowdown_;
  int min_events_;
  double min_share_;
  size_t baseline_window_;
  std::deque<double> ratios_;  // the last baseline_window_ measured/predicted ratios
  struct Count {
    int events = 0, observations = 0;
  };
  std::map<std::pair<int, int>, Count> counts_;  // (min kind, max kind)
};

}  // namespace corun::sched
