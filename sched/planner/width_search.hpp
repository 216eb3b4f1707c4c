// sched/planner/width_search.hpp — Strategies 1-2 of the co-run paper (section III-C/III-D): find an op's
// width by hill climbing over measurements, then give every op kind one stable width. Plain C++.
//
// The climb measures widths 1, 1+x, 1+2x, ... and stops as soon as a measured time is above the previous
// one (the paper observes the time-vs-width curve is convex, so the first rise ends the descent) or when
// all cores have been used (the last step is clamped to max_width so the full machine is always tried).
// Untested widths between two tested ones are linearly interpolated (sched::interpolate_widths); widths
// beyond the last tested one stay NaN: the planner treats NaN as "no prediction".
#pragma once

#include <utility>
#include <vector>

namespace corun::sched {

class WidthSearch {
 public:
  /// `max_width` >= 1 cores may be used, widths advance by `interval` >= 1 (the paper's x).
  WidthSearch(int max_width, int interval);

  /// The width to measure next; 0 once the climb has stopped.
  int next() const { return next_; }
  bool done() const { return next_ == 0; }
  /// Records the time measured at `width`, which must be next(). Throws corun::Error otherwise, or for a
  /// negative / NaN time, so a caller that lost track fails loudly instead of corrupting the curve.
  void record(int width, double time);
  /// Ends the climb at the best width measured so far, without a time for next(): the caller could not
  /// measure it (issue 21 item 7: the co-tenancy governor kept the tuning run's teams narrower, because
  /// wider teams waited on cores other processes use). Widths not measured stay unknown in curve(). Throws
  /// corun::Error before any record() (there is no best width yet) or after the climb stopped.
  void stop();

  /// Time per width, index w-1, size max_width: measured, interpolated in between, NaN beyond.
  std::vector<double> curve() const;
  /// The best measured width (ties: the narrower, fewer cores for the same time); 0 before any record.
  int stable_width() const { return best_width_; }
  double best_time() const { return best_time_; }
  int max_width() const { return max_width_; }
  /// The (width, time) pairs record() was given, in the climb's order: what a later climb of the same op
  /// replays instead of measuring (sched/corun/climb_memory.hpp).
  std::vector<std::pair<int, double>> measured() const;

 private:
  int max_width_;
  int interval_;
  int next_ = 1;
  int best_width_ = 0;
  double best_time_ = 0.0;
  double last_time_ = 0.0;
  std::vector<double> measured_;  // index w-1, NaN where not measured
};

/// Every width a WidthSearch(max_width, interval) may measure, ascending: those of a climb that never sees a
/// rise. `corun profile` calibrates them all, so that the corun policy replays its climbs from the models.
std::vector<int> climb_widths(int max_width, int interval);

/// One instance of an op kind (Strategy 2): its size (bytes, flops, or the time at width 1: anything that
/// orders instances) and the best width its own climb found.
struct KindInstance {
  double size = 0.0;
  int best_width = 0;
};

/// Strategy 2: one width for every instance of a kind, the best width of the largest instance (the most
/// time-consuming one, as the paper does), so that the op's team does not change from instance to
/// instance (cache thrashing, team rebuilds). Ties: the first listed. Throws corun::Error when empty or
/// when the chosen best_width is < 1.
int stable_width_for_kind(const std::vector<KindInstance>& instances);

/// Many cores (issue 17 item 6): the widest team worth giving one op of a graph whose width-1 work is
/// `work_us` and whose width-1 critical path is `critical_path_us`, on `cores` cores: cores / P, rounded
/// up, where P = work / critical path is the graph's average parallelism. An op that takes every idle core
/// because it happens to be ready alone leaves nothing for the P - 1 ops that become ready microseconds
/// later (on LSTM small at 64 simulated cores the busy share was 29%); at cores / P, P ops run side by
/// side. `cores` when either time is not positive (nothing known). Throws corun::Error for cores < 1.
int parallelism_width_cap(double work_us, double critical_path_us, int cores);

}  // namespace corun::sched
