// sched/layout.hpp — Graphi's executor layout: `count` executors of `width` cores each.
//
// Plain C++. The engine resolves the layout (CORUN_EXECUTORS, the profile, or a default) before
// starpu_init and hands it to our policies through set_policy_options(); the policies create the teams.
#pragma once

#include "sched/planner/idle_nap.hpp"

#include <string>
#include <vector>

namespace corun::sched {

struct ExecutorLayout {
  int count = 0;  ///< executors (0: as many as the workers allow)
  int width = 1;  ///< cores per executor (0: default_executor_width of the workers the policy gets)

  bool operator==(const ExecutorLayout&) const = default;
  /// "2x4"
  std::string str() const { return std::to_string(count) + "x" + std::to_string(width); }
};

/// The executor width of cpf's default layout on `cores` workers: 1 (one executor per core) up to 8 cores;
/// beyond, the largest power of two <= sqrt(cores) (16: 4x4, 32: 8x4, 64: 8x8, 128: 16x8). With N x 1, cpf
/// is bounded by the graph's width-1 critical path however many cores there are (182 ms per LSTM-small
/// step at 16-128 simulated cores, as lws); square-ish executors run each op about sqrt(cores) wide while
/// keeping as many executors for the graph's parallel branches. Power-of-two teams never straddle a
/// power-of-two NUMA domain.
int default_executor_width(int cores);

/// Parses "NxK" (N executors of K cores, both >= 1) strictly. Throws corun::Error (invalid_config)
/// naming `what` (e.g. "CORUN_EXECUTORS") for anything else.
ExecutorLayout parse_layout(const std::string& text, const std::string& what);

/// Settings shared by our policies; read when StarPU calls the policy's init/add_workers.
struct PolicyOptions {
  ExecutorLayout layout;       ///< requested layout (count 0 = fill the workers with executors of `width`)
  bool narrow_when_faster = true;  ///< cpf: run a task narrower than its executor when the model says it is faster
  bool merge_when_alone = true;    ///< cpf: a lone ready task on an idle machine gets merged executors (CORUN_CPF_MERGE)
  bool verbose_sched = false;      ///< corun: print every placement and its reason (CORUN_VERBOSE=sched)
  bool cotenancy = true;           ///< measure team tasks and narrow teams on shared cores (CORUN_COTENANCY)
  bool quiet = false;              ///< CORUN_QUIET: no co-tenancy warning line
  /// CORUN_IDLE_NAPS: idle workers sleep instead of spinning while the cores look shared (idle_nap.hpp)
  IdleNaps idle_naps = IdleNaps::when_shared;
};

void set_policy_options(const PolicyOptions& options);
const PolicyOptions& policy_options();

/// The layout the running policy actually built (after clamping to the workers StarPU gave it);
/// count 0 before a policy of ours has started.
ExecutorLayout effective_layout();
/// StarPU worker ids in executor order: executor e owns cores [e*width, (e+1)*width) of this list.
std::vector<int> executor_workers();
void set_effective_layout(const ExecutorLayout& layout, const std::vector<int>& workers);

}  // namespace corun::sched
