#include "sched/planner/corun_planner.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <utility>

namespace corun::sched {

namespace {
// The reason text of a placement, built only when the caller asked for it (`CorunTask::explain`):
// formatting costs more than the decision itself.
class Why {
 public:
  explicit Why(bool on) {
    if (on) os_.emplace();
  }
  template <class T>
  Why& operator<<(const T& v) {
    if (os_) *os_ << v;
    return *this;
  }
  std::string str() const { return os_ ? os_->str() : std::string(); }

 private:
  std::optional<std::ostringstream> os_;
};

double level_of(const CorunTask& t) { return std::isnan(t.level) ? 0.0 : t.level; }
double time_at(const CorunTask& t, int w) {
  return w >= 1 && static_cast<size_t>(w) <= t.predicted.size() ? t.predicted[static_cast<size_t>(w - 1)] : NAN;
}
int cap_of(const CorunTask& t, int cores) { return std::min(t.max_width, cores); }
}  // namespace

CorunPlanner::CorunPlanner(int cores, int threads_per_core) : threads_per_core_(threads_per_core) {
  CORUN_CHECK(cores >= 1, Status::invalid_argument, "corun planner: " << cores << " cores");
  CORUN_CHECK(threads_per_core >= 1, Status::invalid_argument,
              "corun planner: " << threads_per_core << " threads per core (>= 1; 1 means no SMT)");
  owner_.assign(static_cast<size_t>(cores), kIdle);
  slowdown_.assign(static_cast<size_t>(cores), 1.0);
  siblings_.assign(static_cast<size_t>(cores) * static_cast<size_t>(threads_per_core - 1), kIdle);
  sharing_ = cores >= kShareFromCores;
}

std::pair<double, int> CorunPlanner::earliest_finish(const CorunTask& t, double now) const {
  std::vector<std::pair<double, int>> releases;  // (time from now, cores freed), primary threads only
  for (const Running& r : running_)
    if (r.thread == 0) releases.emplace_back(std::isnan(r.end) ? 0.0 : std::max(0.0, r.end - now), r.width);
  std::sort(releases.begin(), releases.end());
  double best_end = INFINITY;
  std::pair<double, int> best{0.0, 0};
  int idle = idle_cores();
  for (const auto& [at, freed] : releases) {
    idle += freed;
    int w = 0;  // the fastest known width within the cores idle by then
    for (int k = 1; k <= std::min(cap_of(t, cores()), idle); ++k)
      if (!std::isnan(time_at(t, k)) && (w == 0 || time_at(t, k) < time_at(t, w))) w = k;
    if (w > 0 && at + time_at(t, w) < best_end) best_end = at + time_at(t, w), best = {at, w};
  }
  return best;
}

int CorunPlanner::share(const CorunTask& t) const {
  if (!sharing_) return cores();
  // In proportion to the width-1 work of the unplaced ready tasks: a long convolution ready beside a hundred
  // optimizer updates must not get 1 core of 64 (GoogLeNet's backward ran 250 ms convolutions at width 1).
  int unplaced = 0;
  double work = 0.0;
  bool known = true;
  for (const Ready& r : ready_) {
    if (r.task.fixed_first >= 0) continue;
    ++unplaced;
    const double t1 = time_at(r.task, 1);
    known = known && t1 > 0.0;
    if (t1 > 0.0) work += t1;
  }
  const int idle = idle_cores();
  if (!known || !(work > 0.0)) return std::max(1, idle / std::max(1, unplaced));  // by count
  return std::clamp(static_cast<int>(idle * time_at(t, 1) / work), 1, idle > 0 ? idle : 1);
}

void CorunPlanner::forbid_corun(int kind_a, int kind_b) {
  CORUN_CHECK(kind_a >= 0 && kind_b >= 0, Status::invalid_argument,
              "corun planner: forbid_corun(" << kind_a << ", " << kind_b
                                             << "): kinds must be >= 0 (-1 never conflicts)");
  forbidden_.insert(std::minmax(kind_a, kind_b));
}

bool CorunPlanner::forbidden(int a, int b) const {
  return a >= 0 && b >= 0 && forbidden_.count(std::minmax(a, b)) > 0;
}

bool CorunPlanner::conflicts(const CorunTask& t) const {
  if (t.kind < 0 || forbidden_.empty()) return false;
  return std::any_of(running_.begin(), running_.end(), [&](const Running& r) { return forbidden(t.kind, r.kind); });
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
  CORUN_CHECK(task.fixed_first >= -1, Status::invalid_argument,
              "corun planner: task " << task.id << " fixed first core " << task.fixed_first << " (-1: not fixed)");
  if (task.fixed_first >= 0)
    CORUN_CHECK(task.fixed_width >= 1 && task.fixed_first + task.fixed_width <= cores(), Status::invalid_argument,
                "corun planner: task " << task.id << " fixed block [" << task.fixed_first << ", "
                                       << task.fixed_first + task.fixed_width
                                       << "): needs width >= 1 and to lie within cores 0.." << cores() - 1);
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

int CorunPlanner::block_for(int width) const {
  if (preferred_ >= 0 && preferred_ + width <= cores()) {
    bool free = true;
    for (int c = preferred_; c < preferred_ + width && free; ++c) free = idle(c);
    if (free) return preferred_;
  }
  return first_fit(width);
}

void CorunPlanner::set_core_slowdowns(std::vector<double> slowdowns) {
  CORUN_CHECK(slowdowns.size() == owner_.size(), Status::invalid_argument,
              "corun planner: " << slowdowns.size() << " core slowdowns for " << cores() << " cores");
  for (double s : slowdowns)
    CORUN_CHECK(s >= 1.0, Status::invalid_argument, "corun planner: core slowdown " << s << " (a factor >= 1)");
  slowdown_ = std::move(slowdowns);
  any_slow_ = std::any_of(slowdown_.begin(), slowdown_.end(), [](double s) { return s > 1.0; });
}

int CorunPlanner::best_block(int width, double* slowdown) const {
  *slowdown = 1.0;
  if (!any_slow_) return block_for(width);
  int best = -1;
  double best_slow = INFINITY;
  for (int first = 0; first + width <= cores(); ++first) {
    bool free = true;
    double slow = 1.0;
    for (int c = first; c < first + width && free; ++c) {
      free = idle(c);
      slow = std::max(slow, slowdown_[static_cast<size_t>(c)]);
    }
    if (!free) continue;
    if (slow < best_slow || (slow == best_slow && first == preferred_)) best = first, best_slow = slow;
  }
  if (best >= 0) *slowdown = best_slow;
  return best;
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
  occupy(id, first, width, /*thread=*/0, /*kind=*/-1, predicted, now);
}

void CorunPlanner::occupy(uint64_t id, int first, int width, int thread, int kind, double predicted, double now) {
  if (thread == 0)
    for (int c = first; c < first + width; ++c) owner_[static_cast<size_t>(c)] = id;
  else
    sibling(first, thread) = id;
  running_.push_back(Running{id, first, width, now + predicted, kind, thread});
}

void CorunPlanner::finished(uint64_t id) {
  auto it = std::find_if(running_.begin(), running_.end(), [&](const Running& r) { return r.id == id; });
  CORUN_CHECK(it != running_.end(), Status::invalid_argument, "corun planner: task " << id << " is not running");
  if (it->thread == 0)
    for (int c = it->first; c < it->first + it->width; ++c) owner_[static_cast<size_t>(c)] = kIdle;
  else
    sibling(it->first, it->thread) = kIdle;
  running_.erase(it);
}

bool CorunPlanner::try_place(const CorunTask& t, double now, double limit, bool fallback, bool others_ready,
                             CorunAssignment& a) {
  int fair = t.fixed_width > 0 ? cores() : share(t);  // a fixed width is exact: no share applies
  // A share holding no width with a known time would start the op at a width nobody measured (the paper's
  // example: A is known at 48 cores only): then the share does not apply.
  if (fair < cores() && candidates(t, fair).empty()) fair = cores();
  const int cap = std::min(cap_of(t, cores()), fair);
  const int stable = std::min(t.stable_width, cap);
  Why why(t.explain);
  why << (fallback ? "fallback" : "co-run") << " limit=" << limit;
  if (fair < cores()) why << " share=" << fair;
  why << ":";
  int pick = 0;
  double pick_time = NAN;  // its time, busy cores included
  // A fixed width without a block (calibration, CORUN_FIXED_WIDTH): that width is the only candidate.
  const std::vector<int> widths =
      t.fixed_width > 0 ? std::vector<int>{std::min(t.fixed_width, cap_of(t, cores()))} : candidates(t, cap);
  for (int w : widths) {
    double slow = 1.0;
    const bool fits = best_block(w, &slow) >= 0;
    const double p = time_at(t, w) * slow;  // on a busy core it runs that much longer
    const bool fast = p <= limit;
    why << " w" << w << "=" << p << (!fits ? " nofit" : fast ? " ok" : " slow");
    if (!fits) continue;
    if (fallback) {
      // Others waiting: the least core-time (width x time) leaves cores for them, which is what keeps
      // throughput up; alone, or with core sharing (the share already leaves the others their cores): the
      // fastest (candidates come fastest first; busy cores may reorder them).
      if (pick == 0 || (others_ready && !sharing_ ? w * p < pick * pick_time : p < pick_time)) pick = w, pick_time = p;
    } else if (fast && (pick == 0 || w < pick))
      pick = w;                                         // narrowest: leaves cores for another op
  }
  if (pick == 0 && !fallback) return false;
  if (pick > 0) {
    why << (!fallback                  ? "; narrowest ok w"
            : others_ready && !sharing_ ? "; least core-time fitting candidate w"
                                        : "; fastest fitting candidate w")
        << pick;
  } else {
    if (t.fixed_width > 0) return false;  // waits for its width
    for (int w = cap; w >= 1 && pick == 0; --w)
      if (first_fit(w) >= 0) pick = w;
    if (pick == 0) return false;  // no idle core at all
    why << "; no candidate fits, widest fit w" << pick;
  }
  if (sharing_ && t.fixed_width <= 0) {
    // Earliest finish: with few idle cores, waiting for running tasks to release theirs may end sooner than
    // starting narrow now (GoogLeNet's 120 ms width-1 gradients at 64 cores). Then the task waits.
    const double now_end = time_at(t, pick);
    const auto [at, w] = earliest_finish(t, now);
    if (w > pick && at + time_at(t, w) < kWaitGain * now_end) {
      why << "; waits: w" << w << " free in " << at << " ends sooner than w" << pick << "=" << now_end;
      return false;
    }
  }
  if (t.fixed_width <= 0 && !sharing_ && std::abs(pick - stable) > 2) {
    // Strategy 2 beats packing: a team far from the op's usual width thrashes caches and rebuilds teams.
    if (first_fit(stable) < 0) return false;
    why << "; >2 from stable w" << stable << " -> stable";
    pick = stable;
  }
  double slow = 1.0;
  a.first_core = best_block(pick, &slow);
  if (slow > 1.0) why << "; busy core(s) x" << slow;  // the adapter binds it late (corun_policy.cpp)
  a.id = t.id;
  if (a.first_core == preferred_) preferred_ = -1;
  a.width = pick;
  a.predicted = time_at(t, pick);
  a.reason = why.str();
  // Its end on a busy block comes later than the model says (the co-run limit of later tasks).
  occupy(t.id, a.first_core, a.width, /*thread=*/0, t.kind, a.predicted * slow, now);
  return true;
}

bool CorunPlanner::try_fixed(const CorunTask& t, double now, CorunAssignment& a) {
  for (int c = t.fixed_first; c < t.fixed_first + t.fixed_width; ++c)
    if (!idle(c)) return false;
  a.id = t.id;
  a.first_core = t.fixed_first;
  a.width = t.fixed_width;
  a.predicted = time_at(t, t.fixed_width);
  Why why(t.explain);
  why << "fixed [" << t.fixed_first << "," << t.fixed_first + t.fixed_width << ")";
  a.reason = why.str();
  occupy(t.id, a.first_core, a.width, /*thread=*/0, t.kind, a.predicted, now);
  return true;
}

bool CorunPlanner::try_sibling(double now, CorunAssignment& a) {
  if (threads_per_core_ == 1) return false;
  // Only beside a task holding every core: anything narrower leaves Strategy 3 a real core to use.
  auto big = std::find_if(running_.begin(), running_.end(),
                          [&](const Running& r) { return r.thread == 0 && r.width == cores(); });
  if (big == running_.end()) return false;
  const double remaining = std::isnan(big->end) ? 0.0 : std::max(0.0, big->end - now);
  int core = -1, thread = 0;  // the lowest free sibling slot
  for (int c = 0; c < cores() && core < 0; ++c)
    for (int h = 1; h < threads_per_core_ && core < 0; ++h)
      if (sibling(c, h) == kIdle) core = c, thread = h;
  if (core < 0) return false;
  for (size_t i = 0; i < ready_.size(); ++i) {
    const CorunTask& t = ready_[i].task;
    if (t.fixed_first >= 0 || conflicts(t)) continue;
    if (std::min({t.stable_width, t.max_width, cores()}) != 1) continue;  // Strategy 2 width: not a small op
    const double p = time_at(t, 1);
    if (!(p <= remaining)) continue;  // unknown or outlives the big op: it would slow it down
    a.id = t.id;
    a.first_core = core;
    a.width = 1;
    a.thread = thread;
    a.predicted = p;
    Why why(t.explain);
    why << "smt beside full-width task " << big->id << " remaining=" << remaining << ": w1=" << p << " ok; core "
        << core << " thread " << thread;
    a.reason = why.str();
    occupy(t.id, core, 1, thread, t.kind, p, now);
    ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
    return true;
  }
  return false;
}

bool CorunPlanner::place_one(double now, CorunAssignment& a) {
  if (idle_cores() == 0) return try_sibling(now, a);  // only Strategy 4 can start anything
  const double limit = longest_remaining(now);
  // Co-run pass (only meaningful when something runs: there is no ongoing op to compare with otherwise);
  // fixed tasks start whenever their block is idle.
  for (size_t i = 0; i < ready_.size(); ++i) {
    const CorunTask& t = ready_[i].task;
    if (conflicts(t)) continue;
    const bool fixed = t.fixed_first >= 0;
    if (fixed ? try_fixed(t, now, a) : (limit >= 0 && try_place(t, now, limit, /*fallback=*/false, false, a))) {
      ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
  }
  // Nothing co-runs without slowing the machine down: the critical path goes next, or nothing does.
  auto top = std::find_if(ready_.begin(), ready_.end(), [](const Ready& r) { return r.task.fixed_first < 0; });
  if (top == ready_.end()) return false;
  const bool others = std::any_of(ready_.begin(), ready_.end(),
                                  [&](const Ready& r) { return &r != &*top && r.task.fixed_first < 0; });
  if (conflicts(top->task) || !try_place(top->task, now, limit, /*fallback=*/true, others, a))
    return false;
  ready_.erase(top);
  return true;
}

void CorunPlanner::dispatch(double now, std::vector<CorunAssignment>& out, int preferred_core) {
  preferred_ = preferred_core >= 0 && preferred_core < cores() ? preferred_core : -1;
  while (!ready_.empty()) {
    CorunAssignment a;
    if (!place_one(now, a)) break;
    out.push_back(std::move(a));
  }
  preferred_ = -1;
}

}  // namespace corun::sched
