#include "sched/planner/corun_planner.hpp"

#include "core/base/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <utility>

namespace corun::sched {

namespace {
double level_of(const CorunTask& t) { return std::isnan(t.level) ? 0.0 : t.level; }
double time_at(const CorunTask& t, int w) {
  return w >= 1 && static_cast<size_t>(w) <= t.predicted.size() ? t.predicted[static_cast<size_t>(w - 1)] : NAN;
}
int cap_of(const CorunTask& t, int cores) { return std::min(t.max_width, cores); }
}  // namespace

CorunPlanner::CorunPlanner(int cores) {
  CORUN_CHECK(cores >= 1, Status::invalid_argument, "corun planner: " << cores << " cores");
  owner_.assign(static_cast<size_t>(cores), kIdle);
}

int CorunPlanner::idle_cores() const {
  return static_cast<int>(std::count(owner_.begin(), owner_.end(), kIdle));
}

std::vector<int> CorunPlanner::candidates(const CorunTask& t, int cores) {
  std::vector<int> widths;
  for (int w = 1; w <= cap_of(t, cores); ++w)
    if (!std::isnan(time_at(t, w))) widths.push_back(w);
  // Stable sort on time keeps ascending width among equal times: ties go to the narrower width.
  std::stable_sort(widths.begin(), widths.end(), [&](int a, int b) { return time_at(t, a) < time_at(t, b); });
  if (widths.size() > 3) widths.resize(3);  // the paper's empirical "three"
  return widths;
}

void CorunPlanner::add_ready(CorunTask task) {
  CORUN_CHECK(task.max_width >= 1, Status::invalid_argument,
              "corun planner: task " << task.id << " max width " << task.max_width);
  CORUN_CHECK(task.stable_width >= 1, Status::invalid_argument,
              "corun planner: task " << task.id << " stable width " << task.stable_width);
  for (const Ready& r : ready_)
    CORUN_CHECK(r.task.id != task.id, Status::invalid_argument, "corun planner: task " << task.id << " is already ready");
  for (const Running& r : running_)
    CORUN_CHECK(r.id != task.id, Status::invalid_argument, "corun planner: task " << task.id << " is running");
  const double lv = level_of(task);
  // Keep ready_ sorted (level descending, then arrival); the paper sees at most ~5 ready ops, so a
  // sorted vector beats a heap that cannot be scanned in order.
  auto pos = std::find_if(ready_.begin(), ready_.end(), [&](const Ready& r) { return level_of(r.task) < lv; });
  ready_.insert(pos, Ready{std::move(task), seq_++});
}

int CorunPlanner::first_fit(int width) const {
  int run = 0;
  for (int c = 0; c < cores(); ++c) {
    run = idle(c) ? run + 1 : 0;
    if (run >= width) return c - width + 1;
  }
  return -1;
}

double CorunPlanner::longest_remaining(double now) const {
  if (running_.empty()) return -1.0;
  double longest = 0.0;
  for (const Running& r : running_)
    if (!std::isnan(r.end)) longest = std::max(longest, r.end - now);
  return longest;
}

void CorunPlanner::place(uint64_t id, int first, int width, double predicted, double now) {
  CORUN_CHECK(width >= 1 && first >= 0 && first + width <= cores(), Status::invalid_argument,
              "corun planner: block [" << first << ", " << first + width << ") outside " << cores() << " cores");
  for (int c = first; c < first + width; ++c)
    CORUN_CHECK(idle(c), Status::invalid_argument, "corun planner: core " << c << " is busy");
  for (int c = first; c < first + width; ++c) owner_[static_cast<size_t>(c)] = id;
  running_.push_back(Running{id, first, width, now + predicted});
}

void CorunPlanner::finished(uint64_t id) {
  auto it = std::find_if(running_.begin(), running_.end(), [&](const Running& r) { return r.id == id; });
  CORUN_CHECK(it != running_.end(), Status::invalid_argument, "corun planner: task " << id << " is not running");
  for (int c = it->first; c < it->first + it->width; ++c) owner_[static_cast<size_t>(c)] = kIdle;
  running_.erase(it);
}

bool CorunPlanner::try_place(const CorunTask& t, double now, double limit, bool fallback, CorunAssignment& a) {
  const int cap = cap_of(t, cores());
  const int stable = std::min(t.stable_width, cap);
  std::ostringstream why;
  why << (fallback ? "fallback" : "co-run") << " limit=" << limit << ":";
  int pick = 0;
  for (int w : candidates(t, cores())) {
    const double p = time_at(t, w);
    const bool fits = first_fit(w) >= 0;
    const bool fast = p <= limit;
    why << " w" << w << "=" << p << (!fits ? " nofit" : fast ? " ok" : " slow");
    if (!fits) continue;
    if (fallback)
      pick = std::max(pick, w);                         // widest candidate that fits
    else if (fast && (pick == 0 || w < pick))
      pick = w;                                         // narrowest: leaves cores for another op
  }
  if (pick == 0 && !fallback) return false;
  if (pick > 0) {
    why << (fallback ? "; widest fitting candidate w" : "; narrowest ok w") << pick;
  } else {
    for (int w = cap; w >= 1 && pick == 0; --w)
      if (first_fit(w) >= 0) pick = w;
    if (pick == 0) return false;  // no idle core at all
    why << "; no candidate fits, widest fit w" << pick;
  }
  if (std::abs(pick - stable) > 2) {
    // Strategy 2 beats packing: a team far from the op's usual width thrashes caches and rebuilds teams.
    if (first_fit(stable) < 0) return false;
    why << "; >2 from stable w" << stable << " -> stable";
    pick = stable;
  }
  a.id = t.id;
  a.first_core = first_fit(pick);
  a.width = pick;
  a.predicted = time_at(t, pick);
  a.reason = why.str();
  place(t.id, a.first_core, a.width, a.predicted, now);
  return true;
}

void CorunPlanner::dispatch(double now, std::vector<CorunAssignment>& out) {
  while (!ready_.empty() && idle_cores() > 0) {
    const double limit = longest_remaining(now);
    CorunAssignment a;
    bool placed = false;
    // Co-run pass: only meaningful when something runs (there is no ongoing op to compare with otherwise).
    for (size_t i = 0; limit >= 0 && i < ready_.size() && !placed; ++i) {
      if (try_place(ready_[i].task, now, limit, /*fallback=*/false, a)) {
        ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
        placed = true;
      }
    }
    if (!placed) {
      // Nothing co-runs without slowing the machine down: the critical path goes next, or nothing does.
      if (!try_place(ready_.front().task, now, limit, /*fallback=*/true, a)) break;
      ready_.erase(ready_.begin());
    }
    out.push_back(std::move(a));
  }
}

}  // namespace corun::sched
