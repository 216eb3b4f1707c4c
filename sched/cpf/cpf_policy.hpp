// sched/cpf/cpf_policy.hpp — corun's Graphi policies as StarPU policy structs.
//
//   cpf   critical-path first: the ready task with the highest level goes to the first idle executor
//   fifo  the same executors fed from a central FIFO in arrival order (the naive baseline)
//
// Both read the executor layout from sched::policy_options() (set by the engine before starpu_init).
#pragma once

struct starpu_sched_policy;

namespace corun::sched {

inline constexpr const char* kCpfDescription =
    "corun: critical-path first over Graphi executors (CORUN_EXECUTORS/CORUN_PROFILE), per-width models";
inline constexpr const char* kFifoDescription = "corun: the cpf executors fed from one central FIFO (baseline)";

starpu_sched_policy* cpf_policy();
starpu_sched_policy* fifo_policy();

}  // namespace corun::sched
