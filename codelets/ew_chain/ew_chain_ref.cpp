// Reference ew_chain: one element at a time, every instruction through the reference formula of its op
// (rounded to float after each op, exactly like the unfused reference kernels).
#include "codelets/elementwise.hpp"
#include "codelets/ew_chain/ew_chain.hpp"

namespace corun::codelets {
namespace {

#define CORUN_EW_CASE_0(name)
#define CORUN_EW_CASE_1(name) \
  case OpKind::name: return ew::name##_ref(a);
#define CORUN_EW_CASE_2(name) \
  case OpKind::name: return ew::name##_ref(a, b);

// One case per chainable row of codelets/ops.def.
float apply_ref(OpKind op, float a, float b) {
  switch (op) {
#define CORUN_OP(name, max_width, groupable, ew_arity, colour, graph_rules) CORUN_EW_CASE_##ew_arity(name)
#include "codelets/ops.def"
#undef CORUN_OP
    default: return 0.0f;  // check_ew_program rejects every other kind
  }
}

}  // namespace

void ew_chain_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int n_in = call.nbuffers() - 1;
  const int n = static_cast<int>(call.program.size()) / kEwFields;
  const Range r = split_range(numel(call, n_in), rank, width);
  float t[kMaxEwInstructions];
  for (int64_t e = r.begin; e < r.end; ++e) {
    auto operand = [&](int32_t arg) { return arg < 0 ? 0.0f : arg < n_in ? buf[arg][e] : t[arg - n_in]; };
    for (int k = 0; k < n; ++k) {
      const int32_t* ins = &call.program[static_cast<size_t>(k * kEwFields)];
      t[k] = apply_ref(static_cast<OpKind>(ins[0]), operand(ins[1]), operand(ins[2]));
    }
    buf[n_in][e] = t[n - 1];
  }
}

}  // namespace corun::codelets
