#include "sched/planner/co_tenancy.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

namespace corun::sched {
namespace {

std::atomic<bool> g_warned{false};
std::atomic<bool> g_narrowed{false};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::string cap_text(int cap) {
  return cap == TeamWidthGovernor::kNoCap ? std::string("no limit") : "width " + std::to_string(cap);
}

}  // namespace

bool TeamWidthGovernor::stalled(const TeamMeasure& m) {
  const bool known = m.predicted_us > 0 && std::isfinite(m.predicted_us);
  const double skew_limit = std::max(kSkewFloorUs, known ? kSkewShare * m.predicted_us : 0.0);
  if (m.skew_us > skew_limit) return true;
  return known && m.duration_us > kSlowFactor * m.predicted_us && m.duration_us - m.predicted_us > kSkewFloorUs;
}

int TeamWidthGovernor::bad_count(const std::deque<TeamMeasure>& w) {
  return static_cast<int>(std::count_if(w.begin(), w.end(), [](const TeamMeasure& m) { return stalled(m); }));
}

bool TeamWidthGovernor::waits_cost_more_than_the_work(const std::deque<TeamMeasure>& w) {
  if (w.size() < static_cast<size_t>(kMinCostlyWindow)) return false;
  int stalls = 0;
  double waited = 0.0, work = 0.0;
  for (const TeamMeasure& m : w) {
    if (!(m.predicted_us > 0) || !std::isfinite(m.predicted_us)) return false;  // nothing to weigh the waits against
    work += m.predicted_us;
    if (stalled(m)) ++stalls, waited += m.skew_us;
  }
  return stalls >= kMinCostlyStalls && waited > work;
}

std::string TeamWidthGovernor::describe(const std::deque<TeamMeasure>& w, int width) const {
  std::vector<double> skews, ratios;
  double waited = 0.0;
  for (const TeamMeasure& m : w) {
    skews.push_back(m.skew_us);
    if (stalled(m)) waited += m.skew_us;
    if (m.predicted_us > 0 && std::isfinite(m.predicted_us)) ratios.push_back(m.duration_us / m.predicted_us);
  }
  char buf[256];
  const double ratio = median(ratios);
  std::snprintf(buf, sizeof(buf),
                "%d of the last %zu team tasks of width up to %d waited on a busy core (%.2f ms in all, median wait "
                "for the last member %.2f ms%s)",
                bad_count(w), w.size(), width, waited / 1000.0, median(skews) / 1000.0,
                std::isnan(ratio) ? "" : (", median time " + std::to_string(ratio).substr(0, 4) + "x the model").c_str());
  return buf;
}

bool TeamWidthGovernor::observe(const TeamMeasure& m) {
  if (!enabled_ || m.width < 2) return false;
  const int current = cap();
  if (m.width > current) {  // a probe at the previous cap
    probes_.push_back(m);
    if (bad_count(probes_) > kProbeWindow - kWidenGood) {  // this window cannot widen: probe half as often
      probes_.clear();
      probe_every_ = std::min(2 * probe_every_, static_cast<unsigned long>(kMaxProbeEvery));
      return false;
    }
    if (probes_.size() < static_cast<size_t>(kProbeWindow)) return false;
    caps_.pop_back();
    last_ = WidthChange{current, cap(), std::to_string(kProbeWindow - bad_count(probes_)) + " of the last " +
                                            std::to_string(kProbeWindow) + " probes at width " +
                                            std::to_string(m.width) + " ran without waiting"};
    probes_.clear();
    window_.clear();
    probe_every_ = kProbeEvery;
    return true;
  }
  window_.push_back(m);
  if (window_.size() > static_cast<size_t>(kWindow)) window_.pop_front();
  if (bad_count(window_) < kDegradeBad && !waits_cost_more_than_the_work(window_)) return false;
  int widest = 2;
  for (const TeamMeasure& w : window_) widest = std::max(widest, w.width);
  const int narrower = std::max(1, std::min(current, widest) / 2);
  last_ = WidthChange{current, narrower, describe(window_, std::min(current, widest))};
  caps_.push_back(narrower);
  window_.clear();
  probes_.clear();
  return true;
}

int TeamWidthGovernor::next_cap() {
  if (caps_.empty()) return kNoCap;
  ++tick_;
  if (tick_ % probe_every_ == 0) return caps_.size() > 1 ? caps_[caps_.size() - 2] : kNoCap;
  return caps_.back();
}

void report_width_change(const char* policy, const WidthChange& change, bool verbose, bool quiet) {
  const bool narrowed = change.to < change.from;
  if (narrowed) g_narrowed.store(true);
  if (verbose) {
    std::fprintf(stderr, "corun sched: %s policy: team width cap %s -> %s: %s\n", policy, cap_text(change.from).c_str(),
                 cap_text(change.to).c_str(), change.cause.c_str());
    return;
  }
  if (!narrowed || quiet || g_warned.exchange(true)) return;
  std::fprintf(stderr,
               "corun: warning: the cores look shared with another process: %s; the %s policy narrows its teams to "
               "width %d while it lasts (results do not change; CORUN_COTENANCY=off keeps the widths)\n",
               change.cause.c_str(), policy, change.to);
}

bool teams_were_narrowed() {
  return g_narrowed.load();
}

}  // namespace corun::sched
