// engine/preflight.hpp — the engine's configuration checks that need no running StarPU (check_config in
// <corun/engine.hpp> runs them all). Split out so the Engine's constructor and a caller that wants to fail
// in milliseconds, before it builds a model, run the very same rules.
#pragma once

#include "sched/registry.hpp"
#include "sched/tuner.hpp"

#include <corun/engine.hpp>

#include <string>

namespace corun::engine {

/// The CORUN_* settings that only mean something to some policies, checked against `policy`'s traits.
/// Throws corun::Error (invalid_config) naming the variables, the policies they apply to and the fix.
void check_policy_options(const Config& config, const sched::ResolvedPolicy& policy);

/// The settings of a policy's engine-side phase (sched/tuner.hpp) from `config`, for `cores` cores; the
/// climbs are remembered under `machine_key` (none when it is empty, or with CORUN_WIDTH_MEMORY=off).
sched::TunerSettings tuner_settings(const Config& config, int cores, bool simulated,
                                    const std::string& machine_key = {});

/// The StarPU variables corun relies on (STARPU_NCPU, the binding variables, ...), parsed as strictly as
/// corun's own: StarPU 1.3 aborts with a backtrace on a non-integer and misbinds on a negative CPU id.
/// Throws corun::Error (invalid_config) naming the variable, the value and what is accepted. A binding id the
/// machine lacks (STARPU_WORKERS_CPUID=99999) and a STARPU_RESERVE_NCPU that leaves no core are refused too.
void check_starpu_environment();

/// Unsets every StarPU variable corun knows (and XDG_CACHE_HOME, StarPU's first choice of home) that is set
/// but empty, so that StarPU, too, counts it as unset. The Engine calls it before anything reads them.
void drop_empty_starpu_variables();

}  // namespace corun::engine
