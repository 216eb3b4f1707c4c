#include "sched/planner/cpf_planner.hpp"

#include "base/check.hpp"

#include <cmath>
#include <utility>

namespace corun::sched {

namespace {
double level_of(const PlannerTask& t) { return std::isnan(t.level) ? 0.0 : t.level; }
}  // namespace

bool CpfPlanner::Before::operator()(const Entry& a, const Entry& b) const {
  // true when `a` must come after `b`.
  if (order == ReadyOrder::level) {
    const double la = level_of(a.task), lb = level_of(b.task);
    if (la != lb) return la < lb;
  }
  return a.seq > b.seq;
}

std::vector<int> team_widths_of(int executor_width) {
  std::vector<int> w;
  for (int x = 1; x < executor_width; x *= 2) w.push_back(x);
  w.push_back(executor_width);
  return w;
}

CpfPlanner::CpfPlanner(ExecutorLayout layout, ReadyOrder order, bool narrow_when_faster, bool merge_when_alone)
    : layout_(layout), order_(order), narrow_(narrow_when_faster), ready_(Before{order}) {
  CORUN_ASSERT(layout.count >= 1 && layout.width >= 1);
  widths_ = team_widths_of(layout.width);
  if (merge_when_alone && layout.count > 1) {
    for (int n = 2; n < layout.count; n *= 2) merged_.push_back(n * layout.width);
    merged_.push_back(layout.count * layout.width);
  }
  busy_.assign(static_cast<size_t>(layout.count), 0);
  idle_count_ = layout.count;
}

int CpfPlanner::choose_width(const PlannerTask& task, double* predicted) const {
  const int cap = std::max(1, std::min(task.max_width, layout_.width));
  const int want = task.fixed_width > 0 ? std::min(task.fixed_width, cap) : cap;
  // The widest team width not above `want`.
  size_t pick = 0;
  for (size_t i = 0; i < widths_.size(); ++i)
    if (widths_[i] <= want) pick = i;
  auto time_at = [&](size_t i) { return i < task.predicted.size() ? task.predicted[i] : NAN; };
  if (task.fixed_width == 0 && narrow_ && !std::isnan(time_at(pick))) {
    // A narrower team only when its prediction is known and strictly better; ties keep the wider one,
    // whose time a run at full width keeps calibrated.
    for (size_t i = 0; i < pick; ++i)
      if (!std::isnan(time_at(i)) && time_at(i) < time_at(pick)) pick = i;
  }
  if (predicted) *predicted = time_at(pick);
  return widths_[pick];
}

void CpfPlanner::add_ready(PlannerTask task) { ready_.push(Entry{std::move(task), seq_++}); }

int CpfPlanner::first_idle() const {
  for (size_t e = 0; e < busy_.size(); ++e)
    if (!busy_[e]) return static_cast<int>(e);
  return -1;
}

Assignment CpfPlanner::assign(int e) {
  const Entry& top = ready_.top();
  Assignment a;
  a.id = top.task.id;
  a.executor = e;
  a.first_core = e * layout_.width;
  a.width = choose_width(top.task, &a.predicted);
  a.level = level_of(top.task);
  ready_.pop();
  busy_[static_cast<size_t>(e)] = 1;
  --idle_count_;
  return a;
}

bool CpfPlanner::assign_merged(Assignment& out) {
  const PlannerTask& task = ready_.top().task;
  if (task.fixed_width > 0) return false;
  size_t pick = merged_.size();
  for (size_t i = 0; i < merged_.size(); ++i)
    if (merged_[i] <= task.max_width) pick = i;
  if (pick == merged_.size()) return false;  // the task cannot use more than one executor
  double alone = NAN;
  choose_width(task, &alone);
  const double merged = pick < task.predicted_merged.size() ? task.predicted_merged[pick] : NAN;
  if (std::isnan(merged)) {
    // Never measured merged: tried (and so calibrated) only on a task long enough at its executor's width that
    // a team's synchronisation (a few µs per task at 2 cores) cannot outweigh the split; a chain of small ops
    // would pay it on every link.
    if (std::isnan(alone) || alone < kTryMergedFromUs) return false;
  } else if (!std::isnan(alone) && !(merged < alone)) {
    return false;  // measured: only when predicted strictly faster
  }
  out.id = task.id;
  out.executor = 0;
  out.first_core = 0;
  out.width = merged_[pick];
  out.level = level_of(task);
  out.predicted = merged;
  ready_.pop();
  const int spanned = out.width / layout_.width;
  for (int e = 0; e < spanned; ++e) busy_[static_cast<size_t>(e)] = 1;
  idle_count_ -= spanned;
  return true;
}

void CpfPlanner::dispatch(std::vector<Assignment>& out, int preferred) {
  if (!merged_.empty() && idle_count_ == layout_.count && ready_.size() == 1) {
    Assignment a;
    if (assign_merged(a)) return out.push_back(a);
  }
  if (preferred >= 0 && preferred < layout_.count && !busy_[static_cast<size_t>(preferred)] && !ready_.empty())
    out.push_back(assign(preferred));
  while (idle_count_ > 0 && !ready_.empty()) {
    const int e = first_idle();
    CORUN_ASSERT(e >= 0);
    out.push_back(assign(e));
  }
}

bool CpfPlanner::dispatch_to(int executor, Assignment& out) {
  CORUN_ASSERT(executor >= 0 && executor < layout_.count);
  if (busy_[static_cast<size_t>(executor)] || ready_.empty()) return false;
  out = assign(executor);
  return true;
}

void CpfPlanner::finished(int executor) {
  CORUN_ASSERT(executor >= 0 && executor < layout_.count && busy_[static_cast<size_t>(executor)]);
  busy_[static_cast<size_t>(executor)] = 0;
  ++idle_count_;
}

}  // namespace corun::sched
