// sched/corun/corun_policy.hpp — the co-run packing policy (`CORUN_SCHED=corun`) as a StarPU policy struct.
//
//   corun  per-op widths and packing of ready ops into idle cores (the co-run paper, Strategies 1-3),
//          critical path first, interference feedback; CORUN_DETERMINISTIC=1 freezes the placement
#pragma once

struct starpu_sched_policy;

namespace corun::sched {

inline constexpr const char* kCorunDescription =
    "corun: co-run packing of ready ops at per-op widths into idle cores, critical path first";

starpu_sched_policy* corun_policy();

}  // namespace corun::sched
