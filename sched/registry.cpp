#include "sched/registry.hpp"

#include "base/check.hpp"
#include "sched/corun/corun_policy.hpp"
#include "sched/corun/corun_tuning.hpp"
#include "sched/cpf/cpf_policy.hpp"

#include <starpu.h>

#include <sstream>

namespace corun::sched {

const std::vector<PolicyEntry>& own_policies() {
  static const std::vector<PolicyEntry> table{
      {"cpf", kCpfDescription, cpf_policy,
       {.teams = TeamWidths::layout, .executor_layout = true, .merges_executors = true}},
      {"fifo", kFifoDescription, fifo_policy, {.teams = TeamWidths::layout, .executor_layout = true}},
      // Its width search and frozen schedule belong to one graph, hence no replicated runs.
      {"corun", kCorunDescription, corun_policy, {.teams = TeamWidths::any, .replicated_runs = false},
       CorunTuning::make, CorunTuning::check_settings},
  };
  return table;
}

PolicyTraits builtin_traits(const std::string& name) {
  struct Row {
    const char* name;
    PolicyTraits traits;
  };
  static const Row table[] = {
      {"peager", {.teams = TeamWidths::any, .context_per_replica = false}},
      {"pheft", {.teams = TeamWidths::any, .context_per_replica = false}},
      {"pgreedy", {.teams = TeamWidths::any}},
  };
  for (const Row& r : table)
    if (name == r.name) return r.traits;
  return {};
}

std::vector<std::pair<std::string, std::string>> builtin_policies() {
  std::vector<std::pair<std::string, std::string>> r;
  // Callable before starpu_init: a NULL-terminated static table of the library.
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); p && *p; ++p)
    r.emplace_back((*p)->policy_name ? (*p)->policy_name : "", (*p)->policy_description ? (*p)->policy_description : "");
  return r;
}

namespace {

bool set(const char* s) { return s != nullptr && *s != '\0'; }

std::string valid_names() {
  std::string r;
  for (const auto& p : own_policies()) r += (r.empty() ? "" : ", ") + std::string(p.name);
  for (const auto& [name, desc] : builtin_policies()) r += (r.empty() ? "" : ", ") + name;
  return r;
}

// Looks `name` up in both tables; fills everything but `source`.
bool lookup(const std::string& name, ResolvedPolicy& out) {
  for (const auto& p : own_policies())
    if (name == p.name) {
      out.name = p.name;
      out.description = p.description;
      out.policy = p.policy();
      out.traits = p.traits;
      out.make_tuner = p.make_tuner;
      out.check_tuner_settings = p.check_tuner_settings;
      return true;
    }
  for (const auto& [n, desc] : builtin_policies())
    if (name == n) {
      out.name = n;
      out.description = desc;
      out.traits = builtin_traits(n);
      return true;
    }
  return false;
}

}  // namespace

ResolvedPolicy resolve_policy(const char* corun_sched, const char* starpu_sched) {
  ResolvedPolicy r;
  if (set(corun_sched) && std::string(corun_sched) == "help") {
    r.help = true;
    return r;
  }
  if (set(corun_sched) && set(starpu_sched) && std::string(corun_sched) != starpu_sched)
    detail::fail(Status::invalid_config,
                 std::string("CORUN_SCHED=") + corun_sched + " and STARPU_SCHED=" + starpu_sched +
                     " disagree (StarPU would silently run STARPU_SCHED); unset STARPU_SCHED or make them equal");
  const char* chosen = set(corun_sched) ? corun_sched : set(starpu_sched) ? starpu_sched : kDefaultPolicy;
  r.source = set(corun_sched) ? "CORUN_SCHED" : set(starpu_sched) ? "STARPU_SCHED" : "default";
  if (!lookup(chosen, r))
    detail::fail(Status::invalid_config, r.source + "='" + chosen + "' is not a scheduling policy; valid names: " +
                                             valid_names() + " (CORUN_SCHED=help describes them)");
  return r;
}

std::string policy_help() {
  std::ostringstream os;
  os << "corun policies (CORUN_SCHED=<name>):\n";
  if (own_policies().empty()) os << "  (none yet)\n";
  for (const auto& p : own_policies()) os << "  " << p.name << "\t" << p.description << "\n";
  os << "StarPU built-in policies:\n";
  for (const auto& [name, desc] : builtin_policies()) os << "  " << name << "\t" << desc << "\n";
  os << "default: " << kDefaultPolicy << "\n";
  return os.str();
}

}  // namespace corun::sched
