#include "sched/corun/corun_tuning.hpp"

#include "base/check.hpp"
#include "base/hash.hpp"
#include "sched/corun/schedule_file.hpp"
#include "sched/planner/corun_planner.hpp"
#include "sched/planner/corun_simulate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace corun::sched {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

CorunTuning::CorunTuning(const std::vector<TunerNode>& nodes, const TunerSettings& settings)
    : cores_(settings.cores),
      fixed_width_(settings.fixed_width),
      deterministic_(settings.deterministic),
      models_are_measurements_(settings.models_are_measurements),
      warmed_up_(settings.models_are_measurements),
      schedule_file_(settings.schedule_file),
      memory_(settings.models_are_measurements ? std::string() : settings.climb_memory_file, settings.op_kinds_tag) {
  std::map<std::pair<int, uint32_t>, int> sig_ids;
  graph_hash_ = hash::fnv1a_u64(hash::kFnvBasis, nodes.size());
  sig_of_.reserve(nodes.size());
  for (const TunerNode& node : nodes) {
    graph_hash_ = hash::fnv1a_u64(hash::fnv1a_u64(graph_hash_, static_cast<uint64_t>(node.kind)), node.footprint);
    auto [it, added] = sig_ids.emplace(std::make_pair(node.kind, node.footprint), static_cast<int>(searches_.size()));
    if (added) {
      kind_of_sig_.push_back(node.kind);
      footprint_of_sig_.push_back(node.footprint);
      first_node_of_sig_.push_back(sig_of_.size());
      searches_.emplace_back(std::min(settings.cores, node.max_width), std::max(1, settings.width_interval));
    }
    sig_of_.push_back(it->second);
  }
  curves_.resize(searches_.size());
  cut_short_.assign(searches_.size(), 0);
  stable_of_kind_.assign(static_cast<size_t>(std::max(0, settings.op_kinds)), 0);
  if (deterministic_ && !schedule_file_.empty()) load_schedule();
}

std::unique_ptr<PlanTuner> CorunTuning::make(const std::vector<TunerNode>& nodes, const TunerSettings& settings) {
  return std::make_unique<CorunTuning>(nodes, settings);
}

void CorunTuning::check_settings(const TunerSettings& settings) {
  if (settings.deterministic && !settings.schedule_file.empty()) check_schedule(settings.schedule_file);
}

bool CorunTuning::tuning() const {
  if (frozen() || fixed_width_ > 0) return false;
  return std::any_of(searches_.begin(), searches_.end(), [](const WidthSearch& s) { return !s.done(); });
}

int CorunTuning::stable_width_of(size_t i) const {
  return stable_of_kind_[static_cast<size_t>(kind_of_sig_[static_cast<size_t>(sig_of_[i])])];
}

void CorunTuning::apply(TunerPlan& plan) {
  const size_t n = sig_of_.size();
  if (plan.hints.size() != n) return;  // no plan for this graph (cannot happen under corun)
  // A climb whose every width the models already hold is not measured again (simulated runs: their
  // predictions; real runs: history entries with enough samples, from earlier processes or `corun profile`).
  if (tuning() && replay_from_models(plan)) plan.stale = true;
  if (deterministic_ && !frozen() && !tuning() && plan.uncalibrated == 0) freeze(plan);
  const bool searching = tuning();
  for (size_t i = 0; i < n; ++i) {
    TaskHint& h = plan.hints[i];
    const int sig = sig_of_[i];
    h.kind = sig;
    h.width_search = false;
    if (frozen()) {
      h.fixed_first = frozen_first_[i];
      h.fixed_width = frozen_width_[i];
      h.stable_width = frozen_width_[i];
    } else if (searching) {
      // Pinned to [0, w): every task of a tuning run waits for core 0, so each is measured alone.
      const WidthSearch& s = searches_[static_cast<size_t>(sig)];
      h.fixed_first = 0;
      h.fixed_width = !warmed_up_ ? s.max_width() : s.done() ? s.stable_width() : s.next();
      h.width_search = !warmed_up_ || !s.done();
    } else {
      h.fixed_first = -1;
      // CORUN_FIXED_WIDTH, clamped like the width the call can use (the planner's max_width).
      h.fixed_width = fixed_width_ > 0 && h.max_width > 0 ? std::min(fixed_width_, h.max_width) : fixed_width_;
      h.stable_width = stable_width_of(i);
    }
  }
  if (!frozen() && !searching && fixed_width_ == 0) cap_widths_by_parallelism(plan);
}

void CorunTuning::cap_widths_by_parallelism(TunerPlan& plan) const {
  if (cores_ < CorunPlanner::kShareFromCores) return;  // the paper's rules, unchanged, below that
  std::vector<double> t1(plan.hints.size(), 0.0);
  double work = 0.0;
  for (size_t i = 0; i < t1.size(); ++i) {
    const TaskHint& h = plan.hints[i];
    t1[i] = h.npredicted >= 1 && h.predicted_us[0] >= 0.0 ? h.predicted_us[0] : 0.0;
    work += t1[i];
  }
  const int cap = parallelism_width_cap(work, critical_path(plan.successors, t1), cores_);
  for (TaskHint& h : plan.hints) h.max_width = std::min(h.max_width, cap);
}

bool CorunTuning::record(const std::vector<TraceTask>& trace) {
  if (!tuning() || trace.size() != sig_of_.size()) return false;
  if (!warmed_up_) {
    warmed_up_ = true;  // the warm-up run: its times include every kernel's first call on each core
    return false;
  }
  std::vector<std::vector<double>> times(searches_.size());
  std::vector<char> capped(searches_.size(), 0);
  for (size_t i = 0; i < trace.size(); ++i) {
    const int sig = sig_of_[i];
    const WidthSearch& s = searches_[static_cast<size_t>(sig)];
    if (s.done()) continue;
    if (trace[i].width == s.next())
      times[static_cast<size_t>(sig)].push_back(trace[i].end_us - trace[i].start_us);
    else if (trace[i].width > 0 && trace[i].width < s.next())
      capped[static_cast<size_t>(sig)] = 1;  // the co-tenancy governor narrowed it (corun_policy.cpp)
  }
  bool finished_now = false;
  for (size_t sig = 0; sig < searches_.size(); ++sig) {
    WidthSearch& s = searches_[sig];
    if (s.done()) continue;
    if (capped[sig] && s.stable_width() > 0) {
      // Teams of the width under test waited on cores other processes use: wider is not worth measuring
      // on this machine now; the best width so far stands (issue 21 item 7), for this process only.
      s.stop();
      cut_short_[sig] = 1;
    } else if (times[sig].empty()) {
      continue;
    } else {
      s.record(s.next(), median(times[sig]));
    }
    if (s.done()) {
      curves_[sig] = s.curve();
      finished_now = true;
    }
  }
  if (finished_now && !tuning()) {
    settle_stable_widths();
    remember_finished_climbs();
  }
  return finished_now;
}

void CorunTuning::remember_finished_climbs() {
  if (!memory_.enabled()) return;
  // Every climb, measured in tuning runs or replayed over calibrated history entries: StarPU may flush an
  // entry later (a tiny kernel's samples on oversubscribed cores), and the climb's result must not go with it.
  // The memory keeps only what is new to it, and writes nothing when nothing is.
  for (size_t sig = 0; sig < searches_.size(); ++sig)
    if (!cut_short_[sig]) memory_.remember(kind_of_sig_[sig], footprint_of_sig_[sig], searches_[sig].measured());
  memory_.save();
}

double CorunTuning::model_time(const TunerPlan& plan, size_t node, int w) const {
  const TaskHint& h = plan.hints[node];
  if (w > h.npredicted) return NAN;
  // Simulated kernels take their model's time, interpolated widths included: any prediction is a measurement.
  if (models_are_measurements_) return h.predicted_us[w - 1];
  // Real kernels: only what StarPU measured at that width often enough to predict it, never an interpolation
  // between two widths (the climb exists to measure those) nor a curve this tuner filled in itself.
  if (plan.calibrated == nullptr || w > plan.calibrated_stride) return NAN;
  return plan.calibrated[node * static_cast<size_t>(plan.calibrated_stride) + static_cast<size_t>(w - 1)];
}

std::optional<WidthSearch> CorunTuning::replayed(const TunerPlan& plan, size_t sig, bool from_memory) const {
  WidthSearch climb = searches_[sig];  // a copy: a climb neither source can finish is measured instead
  while (!climb.done()) {
    const int w = climb.next();
    const double t = from_memory ? memory_.time(kind_of_sig_[sig], footprint_of_sig_[sig], w).value_or(NAN)
                                 : model_time(plan, first_node_of_sig_[sig], w);
    if (!(t >= 0.0)) return std::nullopt;  // unknown (NaN) at a width the climb visits
    climb.record(w, t);
  }
  return climb;
}

bool CorunTuning::replay_from_models(const TunerPlan& plan) {
  bool finished_now = false;
  for (size_t sig = 0; sig < searches_.size(); ++sig) {
    if (searches_[sig].done()) continue;
    // One source per climb: mixing a newer history entry with remembered times could lead the climb to a
    // width neither ever measured. The calibrated history first, as `corun profile` leaves it.
    std::optional<WidthSearch> climb = replayed(plan, sig, false);
    if (!climb) climb = replayed(plan, sig, true);
    if (!climb) continue;
    searches_[sig] = *climb;
    curves_[sig] = climb->curve();
    finished_now = true;
  }
  if (finished_now && !tuning()) {
    settle_stable_widths();
    remember_finished_climbs();
  }
  return finished_now;
}

void CorunTuning::settle_stable_widths() {
  // Strategy 2: per op kind, the best width of its largest signature (time at width 1 orders them).
  std::vector<std::vector<KindInstance>> per_kind(stable_of_kind_.size());
  for (size_t sig = 0; sig < searches_.size(); ++sig)
    per_kind[static_cast<size_t>(kind_of_sig_[sig])].push_back(
        {curves_[sig].empty() ? 0.0 : curves_[sig][0], searches_[sig].stable_width()});
  for (size_t k = 0; k < per_kind.size(); ++k)
    if (!per_kind[k].empty()) stable_of_kind_[k] = stable_width_for_kind(per_kind[k]);
}

void CorunTuning::fill(size_t node, double* row, int max_width) const {
  const std::vector<double>& curve = curves_[static_cast<size_t>(sig_of_[node])];
  for (int w = 1; w <= max_width && w <= static_cast<int>(curve.size()); ++w)
    if (std::isnan(row[w - 1])) row[w - 1] = curve[static_cast<size_t>(w - 1)];
}

void CorunTuning::freeze(const TunerPlan& plan) {
  const size_t n = sig_of_.size();
  std::vector<SimNode> nodes(n);
  for (size_t i = 0; i < n; ++i) {
    const TaskHint& h = plan.hints[i];
    CorunTask& t = nodes[i].task;
    t.level = h.level_us;
    t.predicted.assign(h.predicted_us, h.predicted_us + h.npredicted);
    t.max_width = std::max(1, std::min(h.max_width, cores_));
    t.stable_width = std::max(1, std::min(stable_width_of(i) > 0 ? stable_width_of(i) : t.max_width, t.max_width));
    t.kind = sig_of_[i];
    for (int32_t s : plan.successors[i]) nodes[i].successors.push_back(s);
  }
  const SimResult r = simulate_corun(nodes, cores_);
  frozen_first_.resize(n);
  frozen_width_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    frozen_first_[i] = r.placements[i].first_core;
    frozen_width_[i] = r.placements[i].width;
  }
  if (!schedule_file_.empty()) save_schedule();
}

bool CorunTuning::load_schedule() {
  std::optional<FrozenSchedule> s = read_schedule(schedule_file_);
  if (!s) return false;  // not written yet: the first tuned run writes it
  if (s->graph_hash != graph_hash_ || s->first.size() != sig_of_.size() || s->cores != cores_) return false;  // retune
  frozen_first_ = std::move(s->first);
  frozen_width_ = std::move(s->width);
  return true;
}

void CorunTuning::save_schedule() const {
  write_schedule(schedule_file_, {graph_hash_, cores_, frozen_first_, frozen_width_});
}

}  // namespace corun::sched
