// The graph-side rule table: one entry per row of codelets/ops.def, &<op>_rules where the row has
// graph_rules = 1. Referencing every rule from here is what links graphs/ops/<op>.cpp into a program.
#include "graphs/ops/rules.hpp"

namespace corun::graphs {
namespace {

#define CORUN_RULES_ENTRY_0(name) nullptr,
#define CORUN_RULES_ENTRY_1(name) &name##_rules,
const OpRules* const kRules[] = {
#define CORUN_OP(name, max_width, groupable, ew_arity, colour, graph_rules) CORUN_RULES_ENTRY_##graph_rules(name)
#include "codelets/ops.def"
#undef CORUN_OP
};
#undef CORUN_RULES_ENTRY_0
#undef CORUN_RULES_ENTRY_1

static_assert(sizeof(kRules) / sizeof(kRules[0]) == static_cast<size_t>(codelets::OpKind::count_),
              "one rule entry per OpKind");

}  // namespace

const OpRules* op_rules(codelets::OpKind kind) {
  const int k = static_cast<int>(kind);
  return k >= 0 && k < static_cast<int>(codelets::OpKind::count_) ? kRules[k] : nullptr;
}

}  // namespace corun::graphs
