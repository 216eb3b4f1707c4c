// cli/simulate/scaling_law.hpp — model source (b) of `corun simulate`: per-width times of every op on a
// machine we do not have, extrapolated from the width-1 (and width-2) times measured here.
//
// For one footprint (one op with its shapes) with measured t1 (width 1) and, if calibrated, t2 (width 2):
//   serial fraction s = clamp(2 t2 / t1 - 1, 0, 1)   (Amdahl through the two measured points)
//   optimistic:  T(w) = t1 (s + (1 - s) / w)          s = 0 without t2; barriers free, bandwidth never binds
//   pessimistic: T(w) = max(t1 (s' + (1 - s') / w), r bytes / (w B)) + sync ceil(log2 w)
//                s' = s with t2, 0.1 without; B = the domain's bandwidth / its cores (each core's share when
//                every core is busy); r = 1 + (k - 1) / k for a team spanning k NUMA domains (the remote
//                share of its data at half bandwidth); sync = the machine's team_sync_us per doubling.
// Both keep the width-1 time of this machine's cores: the machine file describes cores, domains and
// bandwidth, not a faster core. docs/simulation.md states the laws and their limits.
#pragma once

#include "cli/simulate/history_file.hpp"
#include "cli/simulate/machine_file.hpp"

#include <string>

namespace corun::cli::sim {

enum class Law { optimistic, pessimistic };

/// "optimistic" | "pessimistic"; throws corun::Error(invalid_argument) otherwise.
Law parse_law(const std::string& name);
const char* law_name(Law law);

/// Time of one footprint at width w (µs) under `law`; t2 <= 0 means not measured.
double scaled_time_us(double t1, double t2, unsigned long bytes, int w, const Machine& machine, Law law);

/// What scale_model did, for the run's report.
struct ScaleCounts {
  int footprints = 0;          ///< footprints with a width-1 time, scaled to widths 1..cores
  int with_width2 = 0;         ///< of those, how many also had a width-2 time (serial fraction measured)
  int skipped_no_width1 = 0;   ///< footprints measured only at widths > 1 (not scaled, left out)
};

/// The model of `measured` on `machine`: widths 1..machine.cores for every footprint measured at width 1.
/// With `use_width2` false, width-2 times are ignored (taken on a loaded machine they are noise, see
/// docs/simulation.md) and every footprint gets the law's default serial fraction.
HistoryModel scale_model(const HistoryModel& measured, const Machine& machine, Law law, ScaleCounts& counts,
                         bool use_width2 = true);

}  // namespace corun::cli::sim
