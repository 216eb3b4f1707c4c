#include "cli/simulate/scaling_law.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace corun::cli::sim {

namespace {
constexpr double kPessimisticSerialDefault = 0.1;  // serial fraction assumed when width 2 was never measured
// StarPU uses a history entry only from STARPU_CALIBRATE_MINIMUM (10) samples on.
constexpr unsigned kSamples = 10;
}  // namespace

Law parse_law(const std::string& name) {
  if (name == "optimistic") return Law::optimistic;
  if (name == "pessimistic") return Law::pessimistic;
  detail::fail(Status::invalid_argument, "scaling law '" + name + "' is not one of optimistic, pessimistic");
}

const char* law_name(Law law) { return law == Law::optimistic ? "optimistic" : "pessimistic"; }

double scaled_time_us(double t1, double t2, unsigned long bytes, int w, const Machine& machine, Law law) {
  const bool measured2 = t2 > 0;
  double s = measured2 ? std::clamp(2 * t2 / t1 - 1, 0.0, 1.0) : 0.0;
  if (law == Law::optimistic) return t1 * (s + (1 - s) / w);
  if (!measured2) s = kPessimisticSerialDefault;
  const double compute = t1 * (s + (1 - s) / w);
  // GB/s = 1e3 bytes/µs.
  const double core_bandwidth = machine.domain_bandwidth_gbs * 1e3 / machine.cores_per_domain();
  // A team wider than a NUMA domain spans ceil(w / cores per domain) domains (teams and domains are both
  // aligned blocks); the share (span - 1) / span of its data is remote, read at half the bandwidth.
  const int span = (w + machine.cores_per_domain() - 1) / machine.cores_per_domain();
  const double remote_factor = 1.0 + static_cast<double>(span - 1) / span;
  const double memory = remote_factor * static_cast<double>(bytes) / (w * core_bandwidth);
  const double levels = std::ceil(std::log2(static_cast<double>(w)));
  return std::max(compute, memory) + machine.team_sync_us * levels;
}

HistoryModel scale_model(const HistoryModel& measured, const Machine& machine, Law law, ScaleCounts& counts,
                         bool use_width2) {
  std::map<uint32_t, const HistoryEntry*> width1, width2;
  for (const auto& [width, entries] : measured.by_width)
    for (const HistoryEntry& e : entries) {
      // An entry StarPU flushed or never calibrated predicts nothing.
      if (!(e.mean_us > 0) || e.nsample == 0) continue;
      if (width == 1) width1[e.footprint] = &e;
      if (width == 2 && use_width2) width2[e.footprint] = &e;
    }
  for (const auto& [footprint, e] : width2)
    if (!width1.count(footprint)) ++counts.skipped_no_width1;
  HistoryModel out;
  for (const auto& [footprint, e1] : width1) {
    auto it = width2.find(footprint);
    const double t2 = it == width2.end() ? 0.0 : it->second->mean_us;
    ++counts.footprints;
    if (t2 > 0) ++counts.with_width2;
    for (int w = 1; w <= machine.cores; ++w) {
      HistoryEntry e = *e1;
      e.mean_us = scaled_time_us(e1->mean_us, t2, e1->size, w, machine, law);
      e.deviation_us = 0;
      e.nsample = std::max(kSamples, e1->nsample);
      out.by_width[w].push_back(e);
    }
  }
  return out;
}

}  // namespace corun::cli::sim
