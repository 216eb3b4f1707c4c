#include "engine/width_models.hpp"

#include "codelets/starpu/codelets.hpp"
#include "sched/widthmodel/interpolate.hpp"

#include <starpu.h>

#include <algorithm>
#include <cmath>

namespace corun::engine {

const std::vector<double>& WidthModels::predict(starpu_task* task, uint32_t footprint, int max_width) {
  const uint64_t key = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(task->cl)) << 32) ^ footprint;
  auto [it, fresh] = cache_.try_emplace(key);
  std::vector<double>& t = it->second.calibrated;
  if (!fresh && static_cast<int>(t.size()) == max_width) return it->second.predicted;
  t.assign(static_cast<size_t>(max_width), NAN);
  for (int w = 1; w <= max_width; ++w) {
    starpu_perfmodel_device dev{};
    dev.type = STARPU_CPU_WORKER;
    dev.devid = 0;  // ignored for CPUs (STARPU_PERF_MODEL_HOMOGENEOUS_CPU)
    dev.ncores = w;
    starpu_perfmodel_arch arch{};
    arch.ndevices = 1;
    arch.devices = &dev;
    const double us = starpu_task_expected_length(task, &arch, 0);
    if (us > 0) t[static_cast<size_t>(w - 1)] = us;  // 0 or NaN: uncalibrated
  }
  it->second.predicted = t;
  sched::interpolate_widths(it->second.predicted);
  return it->second.predicted;
}

const std::vector<double>& WidthModels::calibrated(starpu_task* task, uint32_t footprint, int max_width) {
  predict(task, footprint, max_width);
  const uint64_t key = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(task->cl)) << 32) ^ footprint;
  return cache_.at(key).calibrated;
}

std::vector<double> StarpuOpTimes::predict(const codelets::OpCall& call, int max_width) {
  starpu_task probe;
  starpu_task_init(&probe);
  probe.cl = codelets::codelet(call.kind);
  probe.cl_arg = const_cast<codelets::OpCall*>(&call);  // the footprint callback reads the call
  probe.cl_arg_size = 0;
  std::vector<double> t = models_.predict(&probe, codelets::footprint(call), std::max(1, max_width));
  probe.cl_arg = nullptr;
  starpu_task_clean(&probe);
  return t;
}

}  // namespace corun::engine
