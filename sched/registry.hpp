// sched/registry.hpp — resolving a scheduling-policy name (CORUN_SCHED) before starpu_init.
//
// StarPU 1.3 cannot load an external policy by name: its resolver only knows its static table of
// built-ins, and $STARPU_SCHED silently beats a policy passed in starpu_conf. So corun resolves the name
// itself: one of ours becomes conf.sched_policy (a struct pointer), a StarPU built-in becomes
// conf.sched_policy_name. Unknown names and CORUN_SCHED/STARPU_SCHED conflicts are fatal.
//
// The engine never asks a policy's name: what it needs to know is in the policy's traits, as StarPU's core
// reads a policy's struct fields. A new policy is its folder plus one row of own_policies().
#pragma once

#include "sched/tuner.hpp"

#include <string>
#include <vector>

struct starpu_sched_policy;

namespace corun::sched {

/// Which team widths a policy gives a task.
enum class TeamWidths {
  one,     ///< every task on one worker (lws, eager, dmda, ...)
  layout,  ///< the width of the executor layout it runs (cpf, fifo: CORUN_EXECUTORS / CORUN_PROFILE)
  any,     ///< any width, per task (corun; StarPU's parallel peager, pheft, pgreedy)
};

/// What the engine needs to know about a policy, instead of its name.
struct PolicyTraits {
  TeamWidths teams = TeamWidths::one;
  /// Runs executors of a layout that CORUN_EXECUTORS, CORUN_PROFILE and `corun profile` set.
  bool executor_layout = false;
  /// Gives a lone ready task on an idle machine a team of merged executors (cpf, Config::cpf_merge): the
  /// engine's hints then carry a prediction for every width, not only the executors'.
  bool merges_executors = false;
  /// Engine::run_replicated may use it: the policy's state is not tied to one graph.
  bool replicated_runs = true;
  /// Keeps its state per scheduling context, so one context per NUMA replica works (StarPU 1.3 documents
  /// pheft and peager as keeping one global view of the workers).
  bool context_per_replica = true;
};

/// One of corun's own policies. `policy` returns the struct handed to starpu_conf.
struct PolicyEntry {
  const char* name;
  const char* description;
  starpu_sched_policy* (*policy)();
  PolicyTraits traits{};
  /// The policy's engine-side phase (sched/tuner.hpp), or null. A policy with one takes CORUN_WIDTH_INTERVAL,
  /// CORUN_DETERMINISTIC, CORUN_SCHEDULE and CORUN_VERBOSE=sched; the others refuse them.
  MakeTuner make_tuner = nullptr;
  CheckTunerSettings check_tuner_settings = nullptr;  ///< with make_tuner: its files, before StarPU starts
};

/// corun's own policies (the table grows as policies land in sched/<name>/).
const std::vector<PolicyEntry>& own_policies();

/// Name and description of every StarPU built-in of the linked library, in StarPU's order.
std::vector<std::pair<std::string, std::string>> builtin_policies();

/// The traits of a StarPU built-in (a small table of those that differ from the defaults: the parallel
/// peager, pheft and pgreedy form teams; pheft and peager keep one view of all workers).
PolicyTraits builtin_traits(const std::string& name);

/// The first of corun's own policies for which `has` is true, in registry order ("" when none): the one a
/// message suggests.
template <class Has>
std::string first_own_policy(Has has) {
  for (const PolicyEntry& p : own_policies())
    if (has(p)) return p.name;
  return "";
}

/// The names of corun's own policies for which `has` is true, as "a, b and c" ("" when none).
template <class Has>
std::string own_policy_names(Has has) {
  std::vector<std::string> names;
  for (const PolicyEntry& p : own_policies())
    if (has(p)) names.emplace_back(p.name);
  std::string r;
  for (size_t i = 0; i < names.size(); ++i)
    r += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return r;
}

/// The policy used when neither CORUN_SCHED nor STARPU_SCHED is set.
inline constexpr const char* kDefaultPolicy = "lws";

struct ResolvedPolicy {
  std::string name;
  std::string description;
  std::string source;                      ///< "CORUN_SCHED", "STARPU_SCHED" or "default"
  starpu_sched_policy* policy = nullptr;   ///< set for corun's own policies, null for built-ins
  PolicyTraits traits;                     ///< the row's, or builtin_traits()
  MakeTuner make_tuner = nullptr;          ///< PolicyEntry::make_tuner (own policies only)
  CheckTunerSettings check_tuner_settings = nullptr;
  bool help = false;                       ///< the name was "help": print policy_help() and stop
};

/// Resolves the policy from the two variables' values (nullptr or "" = unset). Throws corun::Error
/// (invalid_config) for an unknown name or when both are set and disagree.
ResolvedPolicy resolve_policy(const char* corun_sched, const char* starpu_sched);

/// Human-readable list of every valid name with its one-line description.
std::string policy_help();

}  // namespace corun::sched
