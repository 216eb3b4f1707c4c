// engine/width_models.hpp — per-width predictions from StarPU's history perfmodels.
//
// A team of w cores is the perf arch {CPU, ncores = w}; StarPU keeps one history entry per (op symbol,
// footprint, arch), shared by every team of that size (design.md: one arch per team size). Querying a
// width without samples returns NaN and switches the model to calibration mode for the run, so the
// engine's queries are also what makes a run record samples for our policies.
#pragma once

#include "codelets/op.hpp"
#include "engine/pass_gain.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

struct starpu_task;

namespace corun::engine {

class WidthModels {
 public:
  /// Predictions for widths 1..max_width, in µs, index w - 1; widths never measured are interpolated
  /// between measured ones, the rest is NaN. Cached per (codelet, footprint) until clear().
  const std::vector<double>& predict(starpu_task* task, uint32_t footprint, int max_width);
  /// The row of the last predict() of the same (codelet, footprint) before interpolation: NaN at every width
  /// whose history entry has fewer than STARPU_CALIBRATE_MINIMUM samples (what a width search may trust as a
  /// measurement; an interpolated width was never run).
  const std::vector<double>& calibrated(starpu_task* task, uint32_t footprint, int max_width);
  /// Forget the cache (the models change as a run records samples): call once per run.
  void clear() { cache_.clear(); }

 private:
  struct Rows {
    std::vector<double> calibrated, predicted;
  };
  std::unordered_map<uint64_t, Rows> cache_;
};

/// The StarPU history models as OpTimes for the plan step's grouping decisions: a probe task (never
/// submitted) carries the call, so the prediction is that of the op's codelet and footprint.
class StarpuOpTimes : public OpTimes {
 public:
  std::vector<double> predict(const codelets::OpCall& call, int max_width) override;

 private:
  WidthModels models_;
};

}  // namespace corun::engine
