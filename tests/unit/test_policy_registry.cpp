// sched::resolve_policy: which policy a (CORUN_SCHED, STARPU_SCHED) pair selects, and the errors for unknown
// names and conflicts. Needs only StarPU's static policy table, not starpu_init.
#include "sched/registry.hpp"

#include "common/error_matchers.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

namespace {

using corun::Status;
namespace sched = corun::sched;

TEST(PolicyRegistry, DefaultWhenNothingSet) {
  for (auto [c, s] : {std::pair<const char*, const char*>{nullptr, nullptr}, {"", ""}, {"", nullptr}, {nullptr, ""}}) {
    const auto r = sched::resolve_policy(c, s);
    EXPECT_EQ(r.name, sched::kDefaultPolicy);
    EXPECT_EQ(r.name, "lws");
    EXPECT_EQ(r.source, "default");
    EXPECT_FALSE(r.help);
    EXPECT_FALSE(r.description.empty());
  }
}

TEST(PolicyRegistry, CorunSchedBuiltin) {
  const auto r = sched::resolve_policy("eager", nullptr);
  EXPECT_EQ(r.name, "eager");
  EXPECT_EQ(r.source, "CORUN_SCHED");
  EXPECT_FALSE(r.help);
  EXPECT_EQ(r.policy, nullptr);  // a StarPU built-in is passed by name
  EXPECT_FALSE(r.description.empty());
}

TEST(PolicyRegistry, SameValueInBothIsNotAConflict) {
  const auto r = sched::resolve_policy("dmdas", "dmdas");
  EXPECT_EQ(r.name, "dmdas");
  EXPECT_EQ(r.source, "CORUN_SCHED");
}

TEST(PolicyRegistry, StarpuSchedAlone) {
  const auto r = sched::resolve_policy(nullptr, "dmdas");
  EXPECT_EQ(r.name, "dmdas");
  EXPECT_EQ(r.source, "STARPU_SCHED");
  const auto r2 = sched::resolve_policy("", "eager");
  EXPECT_EQ(r2.name, "eager");
  EXPECT_EQ(r2.source, "STARPU_SCHED");
}

TEST(PolicyRegistry, UnknownNameListsValidNames) {
  EXPECT_CORUN_ERROR(sched::resolve_policy("nosuch", nullptr), Status::invalid_config, "CORUN_SCHED='nosuch'", "eager",
                     "lws", "dmdas", "pheft", "CORUN_SCHED=help");
  EXPECT_CORUN_ERROR(sched::resolve_policy(nullptr, "nosuch"), Status::invalid_config, "STARPU_SCHED='nosuch'", "eager",
                     "lws");
  // Exact names only.
  EXPECT_CORUN_ERROR(sched::resolve_policy("LWS", nullptr), Status::invalid_config, "'LWS'");
  EXPECT_CORUN_ERROR(sched::resolve_policy(" lws", nullptr), Status::invalid_config, "' lws'");
}

TEST(PolicyRegistry, ConflictNamesBoth) {
  EXPECT_CORUN_ERROR(sched::resolve_policy("eager", "lws"), Status::invalid_config, "CORUN_SCHED=eager",
                     "STARPU_SCHED=lws");
  // The conflict is reported even if one of the names is unknown.
  EXPECT_CORUN_ERROR(sched::resolve_policy("nosuch", "lws"), Status::invalid_config, "CORUN_SCHED=nosuch",
                     "STARPU_SCHED=lws");
}

TEST(PolicyRegistry, Help) {
  const auto r = sched::resolve_policy("help", nullptr);
  EXPECT_TRUE(r.help);
  // help wins over STARPU_SCHED (nothing is run).
  EXPECT_TRUE(sched::resolve_policy("help", "lws").help);
}

TEST(PolicyRegistry, HelpListsPoliciesWithDescriptions) {
  const std::string h = sched::policy_help();
  std::map<std::string, std::string> listed;
  std::istringstream in(h);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  ", 0) != 0) continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    listed[line.substr(2, tab - 2)] = line.substr(tab + 1);
  }
  for (const char* name : {"eager", "lws", "dmdas", "pheft"}) {
    ASSERT_TRUE(listed.count(name)) << name << " missing from:\n" << h;
    EXPECT_FALSE(listed[name].empty()) << name << " has no description";
  }
  EXPECT_NE(h.find("default: lws"), std::string::npos) << h;
  // Every listed name resolves.
  for (const auto& [name, desc] : listed) {
    const auto r = sched::resolve_policy(name.c_str(), nullptr);
    EXPECT_EQ(r.name, name);
    EXPECT_EQ(r.description, desc);
  }
}

TEST(PolicyRegistry, TablesAreConsistent) {
  std::set<std::string> names;
  for (const auto& p : sched::own_policies()) {
    EXPECT_TRUE(names.insert(p.name).second) << "duplicate " << p.name;
    EXPECT_NE(p.description, nullptr);
    EXPECT_NE(p.policy, nullptr);
  }
  const auto builtins = sched::builtin_policies();
  EXPECT_FALSE(builtins.empty());
  for (const auto& [name, desc] : builtins) {
    EXPECT_FALSE(name.empty());
    // An own policy must not shadow a StarPU built-in under the same name.
    EXPECT_FALSE(names.count(name)) << name << " is both corun's and StarPU's";
  }
  for (const auto& p : sched::own_policies()) {
    const auto r = sched::resolve_policy(p.name, nullptr);
    EXPECT_EQ(r.name, p.name);
    EXPECT_NE(r.policy, nullptr);
  }
}

}  // namespace
