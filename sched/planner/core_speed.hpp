// sched/planner/core_speed.hpp — which of our cores another process is using (issue 21 item 7). Plain C++.
//
// A process pinned to one core (a spin loop, another job's thread) takes about half of it from our worker
// there: every task placed on it runs about twice its model, while lws's stealing moves work off it. The
// corun planner places a ready task on any idle core, so without this the critical path kept landing on
// the busy core (corun 2.2x lws with a spinner on cpu 0, session 8).
//
// CoreSpeed keeps, per core, the measured/predicted ratios of the last kWindow width-1 tasks that ran there,
// and reports a core's slowdown relative to the fastest core: its median ratio over the lowest median of the
// cores with at least kMinSamples samples. A slowdown under kBusyFactor reads as 1 (noise and cache effects
// must not reorder cores), so on a quiet or a uniformly loaded machine every core is equal and the planner
// behaves exactly as without it. A core is measured again as soon as it runs width-1 tasks, so a co-tenant
// that leaves is forgotten within kWindow of its tasks; the planner still gives the busy core tasks when
// no quiet core is idle, so it never stops being measured.
#pragma once

#include <deque>
#include <vector>

namespace corun::sched {

class CoreSpeed {
 public:
  static constexpr int kWindow = 16;
  static constexpr int kMinSamples = 4;
  static constexpr double kBusyFactor = 1.5;  // a quiet core's tasks vary less than this around their model

  /// Throws corun::Error unless cores >= 1.
  explicit CoreSpeed(int cores);

  /// One width-1 task on `core` took `measured` for a prediction of `predicted` (same unit). Ignored when
  /// either is not positive and finite, or `core` is out of range.
  void observe(int core, double predicted, double measured);
  /// The core's slowdown relative to the fastest measured core (>= 1): 1 until it and one other core have
  /// kMinSamples samples, and below kBusyFactor.
  double slowdown(int core) const;
  /// slowdown() of every core, computed once (the planner reads it per dispatch).
  std::vector<double> slowdowns() const;

 private:
  double median_of(int core) const;  // NaN under kMinSamples samples
  std::vector<std::deque<double>> ratios_;
};

}  // namespace corun::sched
