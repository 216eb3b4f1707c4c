// Fast ew_chain: this member's 16-aligned element range is processed in blocks of kChunk elements; each
// instruction runs as one loop over the block, reading inputs in place and results from a per-instruction
// scratch block on the stack (the last instruction writes the output directly). Intermediates never leave
// the cache, and one task replaces a chain of tasks.
#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"
#include "codelets/ew_chain/ew_chain.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

// Scratch per instruction: 16 instructions x 256 floats = 16 KiB of stack, within L1 together with the
// inputs' blocks.
constexpr int64_t kChunk = 256;

// One case per chainable row of codelets/ops.def, through the same loops and formulas as the op's own
// kernel. Lambdas, not function pointers, so every loop body is inlined and the arithmetic ones vectorise.
#define CORUN_EW_CASE_0(name)
#define CORUN_EW_CASE_1(name) \
  case OpKind::name: return ew::map1([](float x) { return ew::name##_fast(x); }, a, y, n);
#define CORUN_EW_CASE_2(name) \
  case OpKind::name: return ew::map2([](float p, float q) { return ew::name##_fast(p, q); }, a, b, y, n);

void apply_fast(OpKind op, const float* a, const float* b, float* y, int64_t n) {
  switch (op) {
#define CORUN_OP(name, max_width, groupable, ew_arity, colour, graph_rules) CORUN_EW_CASE_##ew_arity(name)
#include "codelets/ops.def"
#undef CORUN_OP
    default: return;  // check_ew_program rejects every other kind
  }
}

}  // namespace

void ew_chain_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int n_in = call.nbuffers() - 1;
  const int n = static_cast<int>(call.program.size()) / kEwFields;
  const Range r = split_range(numel(call, n_in), rank, width, ew::kBlock);
  alignas(64) float scratch[kMaxEwInstructions][kChunk];
  for (int64_t e0 = r.begin; e0 < r.end; e0 += kChunk) {
    const int64_t len = std::min(kChunk, r.end - e0);
    auto operand = [&](int32_t arg) -> const float* {
      return arg < 0 ? nullptr : arg < n_in ? buf[arg] + e0 : scratch[arg - n_in];
    };
    for (int k = 0; k < n; ++k) {
      const int32_t* ins = &call.program[static_cast<size_t>(k * kEwFields)];
      float* y = k + 1 == n ? buf[n_in] + e0 : scratch[k];
      apply_fast(static_cast<OpKind>(ins[0]), operand(ins[1]), operand(ins[2]), y, len);
    }
  }
}

}  // namespace corun::codelets
