// sched/registry.hpp — resolving a scheduling-policy name (CORUN_SCHED) before starpu_init.
//
// StarPU 1.3 cannot load an external policy by name: its resolver only knows its static table of
// built-ins, and $STARPU_SCHED silently beats a policy passed in starpu_conf. So corun resolves the name
// itself: one of ours becomes conf.sched_policy (a struct pointer), a StarPU built-in becomes
// conf.sched_policy_name. Unknown names and CORUN_SCHED/STARPU_SCHED conflicts are fatal.
#pragma once

#include <string>
#include <vector>

struct starpu_sched_policy;

namespace corun::sched {

/// One of corun's own policies. `policy` returns the struct handed to starpu_conf.
struct PolicyEntry {
  const char* name;
  const char* description;
  starpu_sched_policy* (*policy)();
  /// Gives a lone ready task on an idle machine a team of merged executors (cpf, Config::cpf_merge): the
  /// engine's hints then carry a prediction for every width, not only the executors'.
  bool merges_executors = false;
};

/// corun's own policies (the table grows as policies land in sched/<name>/).
const std::vector<PolicyEntry>& own_policies();

/// Name and description of every StarPU built-in of the linked library, in StarPU's order.
std::vector<std::pair<std::string, std::string>> builtin_policies();

/// The policy used when neither CORUN_SCHED nor STARPU_SCHED is set.
inline constexpr const char* kDefaultPolicy = "lws";

struct ResolvedPolicy {
  std::string name;
  std::string description;
  std::string source;                      ///< "CORUN_SCHED", "STARPU_SCHED" or "default"
  starpu_sched_policy* policy = nullptr;   ///< set for corun's own policies, null for built-ins
  bool merges_executors = false;           ///< PolicyEntry::merges_executors
  bool help = false;                       ///< the name was "help": print policy_help() and stop
};

/// Resolves the policy from the two variables' values (nullptr or "" = unset). Throws corun::Error
/// (invalid_config) for an unknown name or when both are set and disagree.
ResolvedPolicy resolve_policy(const char* corun_sched, const char* starpu_sched);

/// Human-readable list of every valid name with its one-line description.
std::string policy_help();

}  // namespace corun::sched
