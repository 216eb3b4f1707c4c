#include "sched/toolbox/team_watch.hpp"

#include <starpu.h>

#include <cmath>

namespace corun::sched {

void TeamWatch::set_up(int cores) {
  slots_ = std::make_unique<Slot[]>(static_cast<size_t>(cores));
}

void TeamWatch::placed(int first_core, int width, double predicted_us, bool cold) {
  if (width == 1) {
    slots_[static_cast<size_t>(first_core)].first = -1;
    return;
  }
  for (int c = first_core; c < first_core + width; ++c) slots_[static_cast<size_t>(c)].first = first_core;
  Slot& t = slots_[static_cast<size_t>(first_core)];
  t.width = width;
  t.placed = starpu_timing_now();
  t.cold = cold;
  t.predicted = predicted_us;
  t.started.store(0, std::memory_order_relaxed);
  t.finished.store(0, std::memory_order_relaxed);
}

// The team starts when its last member starts: StarPU 1.3 calls pre_exec_hook on each member after the team
// barrier, so every member's start is then the latest member's arrival (and were it called before the
// barrier, the last call would still be that arrival). start - placed is what the team waited for it.
void TeamWatch::on_entry(int core) {
  const int first = slots_[static_cast<size_t>(core)].first;
  if (first < 0) return;
  Slot& t = slots_[static_cast<size_t>(first)];
  if (t.started.fetch_add(1, std::memory_order_acq_rel) + 1 == t.width)
    t.start.store(starpu_timing_now(), std::memory_order_release);
}

// The last member to finish reports the team (before its finished_locked() frees the block).
bool TeamWatch::on_exit(int core, TeamMeasure& m) {
  const int first = slots_[static_cast<size_t>(core)].first;
  if (first < 0) return false;
  Slot& t = slots_[static_cast<size_t>(first)];
  if (t.finished.fetch_add(1, std::memory_order_acq_rel) + 1 != t.width || t.cold) return false;
  const double end = starpu_timing_now();
  const double start = t.start.load(std::memory_order_acquire);
  m = TeamMeasure{t.width, start - t.placed, end - start, std::isnan(t.predicted) ? 0.0 : t.predicted};
  return true;
}

}  // namespace corun::sched
