// serve/runtime/plan_search.hpp — DeepCPU's search (section 5, "Search space size"): phased schedules
// (pruned and deduplicated, serve/kernels/schedules.hpp) x parallelism degree (team width, and for
// bidirectional models one or two direction groups) with PCP's partition for each, calibrated by timing
// real requests on the team; then the fastest execution mode (WCS, per-step tasks, resident team, inline).
#pragma once

#include <corun/serve.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace corun::serve {

/// L2 and L3 bytes per core from hwloc (the first L2 and L3 objects; L3 0 when there is none).
struct CacheSizes {
  int64_t l2 = 0, l3 = 0;
};
CacheSizes cache_sizes();

/// Every candidate plan (mode wcs) for up to `max_workers` workers: schedules x widths x direction groups,
/// each with PCP's partition. The first one is the analytical default (every input MM hoisted, all workers).
std::vector<Plan> candidate_plans(const ModelSpec& spec, int batch, int seq, int max_workers, int64_t l2_bytes);

/// Times `runs` requests of `seq` steps (after one warm-up) with `plan`; the median in ms.
double calibrate_plan(const Model& model, int batch, int seq, const Plan& plan, int runs);

/// Calibrates every candidate (interleaved rounds, about `runs` requests each; the median counts) and
/// returns the fastest, then times it again side by side with the same plan as per-step tasks and as a
/// resident team, and with the best one-worker plan run inline on the calling thread, and keeps the
/// fastest of these. `timed` (optional) receives every plan timed, in order, with its calibrated_ms. Prints nothing.
Plan search_plan(const Model& model, int batch, int seq, int max_workers, int runs, std::vector<Plan>* timed);

}  // namespace corun::serve
