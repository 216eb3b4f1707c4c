// sched/planner/co_tenancy.hpp — narrower teams when the cores are shared (issue 21 item 7).
//
// Plain C++, no StarPU. When another process runs on some of our cores, a team of width w waits at its
// barrier for the member whose core is busy: one late member stalls w cores, and two trainings sharing two
// cores were seen 6-14x slower at width 2 than at width 1. The toolbox measures every team task (how long
// it waited for its last member, how long it took against its per-width model: sched/toolbox/team_policy.hpp);
// this governor turns those measurements into a width cap that the policies apply when they choose widths:
//
//   * a team task is "stalled" when it waited for a member more than max(kSkewFloorUs, kSkewShare x predicted)
//     to arrive, or when it took more than kSlowFactor x its predicted time (and at least kSkewFloorUs more);
//   * when kDegradeBad of the last kWindow team tasks at the allowed widths stalled, the cap halves
//     (4 -> 2 -> 1: narrower teams first, then width 1); it also halves when at least kMinCostlyStalls of
//     them stalled and the stalled ones waited longer in all than the window's tasks were predicted to run
//     (the teams lose more to waiting than any width could gain: a member's core lent to a spin loop for a
//     5 ms time slice stalls a 20-400 µs team now and then, too rarely for the count, and an LSTM step spent
//     most of its extra time there);
//   * reversible: while capped, every kProbeEvery-th task may use the previous cap again (a probe); when
//     kWidenGood of the last kProbeWindow probe team tasks ran without a stall, the previous cap returns.
//     The two thresholds differ (hysteresis), so a machine near the limit does not flip every few tasks.
//     A probe window that can no longer widen (2 stalls) doubles the probe interval, up to kMaxProbeEvery:
//     a probe on a still-busy core stalls a whole team, so a lasting co-tenant is probed ever more rarely.
// Results never depend on the width (every op splits over output extents only, checked by test_ops at
// widths 1-16), so a cap changes timings, never values.
#pragma once

#include <deque>
#include <limits>
#include <string>
#include <vector>

namespace corun::sched {

/// One finished team task, as the toolbox measured it (µs, StarPU's clock).
struct TeamMeasure {
  int width = 0;          ///< members (>= 2)
  /// How long the team waited for its latest member: placed on idle cores, its members meet at StarPU's team
  /// barrier before the kernel (pre_exec_hook runs after it), so start - placement is the arrival skew.
  double skew_us = 0;
  double duration_us = 0; ///< last member's end - the team's start
  double predicted_us = 0;///< the model's time at this width (0 or NaN: unknown)
};

/// A change of the cap, for the one warning line and CORUN_VERBOSE=sched.
struct WidthChange {
  int from = 0;        ///< previous cap (kNoCap: none)
  int to = 0;          ///< new cap (kNoCap: none)
  std::string cause;   ///< "6 of 16 team tasks of width 2 waited on a busy core (median start skew 3.1 ms ...)"
};

class TeamWidthGovernor {
 public:
  static constexpr int kNoCap = std::numeric_limits<int>::max();
  static constexpr double kSkewFloorUs = 500.0;  // below: wake-up latency and timer noise on an idle machine
  static constexpr double kSkewShare = 0.5;      // a member late by half the task's time wastes half a core
  static constexpr double kSlowFactor = 3.0;     // far above the model: noise on a quiet machine stays < 2x
  static constexpr int kWindow = 16;
  static constexpr int kDegradeBad = 6;          // >= 6 of 16 (37%) stalled: narrow
  static constexpr int kMinCostlyStalls = 2;     // the waiting-time rule needs two stalls (one is a hiccup)
  static constexpr int kMinCostlyWindow = 8;     // ... among at least this many team tasks
  static constexpr int kProbeEvery = 32;         // one task in 32 may use the previous cap while capped
  static constexpr int kProbeWindow = 8;
  static constexpr int kWidenGood = 7;           // >= 7 of 8 probes clean (12% stalled at most): widen
  static constexpr int kMaxProbeEvery = 1024;    // each failed probe window halves how often probes run

  explicit TeamWidthGovernor(bool enabled = true) : enabled_(enabled) {}

  /// Whether `m` counts as a stall (exposed for the tests and the verbose detail).
  static bool stalled(const TeamMeasure& m);

  /// Records one finished team task. Returns true when the cap changed; last_change() then says how.
  bool observe(const TeamMeasure& m);

  /// The widest team allowed for the next task the policy places (kNoCap: no limit). Counts calls: every
  /// kProbeEvery-th call (doubling after each failed probe window) while capped returns the previous cap,
  /// so the policy keeps measuring it.
  int next_cap();
  /// The cap without counting (tests, traces).
  int cap() const { return caps_.empty() ? kNoCap : caps_.back(); }
  const WidthChange& last_change() const { return last_; }

 private:
  static int bad_count(const std::deque<TeamMeasure>& w);
  /// The waiting-time rule: kMinCostlyStalls stalls or more whose waits add up to more than the predicted
  /// times of all of `w`.
  static bool waits_cost_more_than_the_work(const std::deque<TeamMeasure>& w);
  std::string describe(const std::deque<TeamMeasure>& w, int width) const;

  bool enabled_;
  std::vector<int> caps_;             // stack of caps; back() is the current one, empty: none
  std::deque<TeamMeasure> window_;    // recent team tasks at widths <= cap
  std::deque<TeamMeasure> probes_;    // recent team tasks wider than the cap (probes)
  unsigned long tick_ = 0;
  unsigned long probe_every_ = kProbeEvery;  // a probe stalls a whole team: rarer while they keep failing
  WidthChange last_;
};

/// Prints a cap change on stderr. The first narrowing in the process prints the one warning line
/// ("corun: warning: teams narrowed to width 1: ...; CORUN_COTENANCY=off keeps the widths"); every change
/// is printed when `verbose` (CORUN_VERBOSE=sched, corun policy). `quiet` (CORUN_QUIET=1) silences the warning.
void report_width_change(const char* policy, const WidthChange& change, bool verbose, bool quiet);

/// Whether any policy narrowed its teams in this process (tests, corun train's summary).
bool teams_were_narrowed();

}  // namespace corun::sched
