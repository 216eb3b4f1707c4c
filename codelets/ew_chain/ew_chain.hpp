// ew_chain: several same-shape elementwise ops fused into one task (built by graphs/passes/
// fuse_elementwise). Buffers: the chain's inputs (read), then its one output (written); all one shape.
//
// The OpCall's `program` is a list of instructions of kEwFields integers {op, a, b}: `op` is one of the
// chainable OpKinds (ew_arity > 0); `a` and `b` are operands, 0 .. n_in-1 for the input buffers and
// n_in + k for the result of instruction k (an earlier one); `b` is -1 for a one-operand op. Operands keep
// the op's buffer order (sigmoid_grad's a = Y, b = dY). The last instruction's result is the output.
// Every element is computed by the same scalar functions as the unfused kernels (codelets/elementwise.hpp),
// so a fused graph gives bitwise the same numbers as the unfused one with the same kernel choice.
#pragma once

#include "codelets/op.hpp"

#include <string>

namespace corun::codelets {

inline constexpr int kEwFields = 3;
/// Longest chain: bounds the kernel's per-member scratch (kMaxEwInstructions blocks on the stack).
inline constexpr int kMaxEwInstructions = 16;

/// Operands of `kind` inside a chain (the ew_arity column of codelets/ops.def): 1 (sigmoid, tanh, relu,
/// gelu), 2 (add, sub, mul and the *_grad forms), or 0 when the kind cannot be chained. `add` is chainable
/// only without broadcast (checked by the pass).
int ew_arity(OpKind kind);

/// Throws corun::Error describing the first problem of a malformed ew_chain call (kind, modes, shapes,
/// instruction count, opcodes, operand ranges).
void check_ew_program(const OpCall& call);

/// "t0 = mul(x1, x2); t1 = sigmoid_grad(x0, t0)" (x: inputs, t: results; the last is the output), for DOT
/// labels and messages. Assumes a valid program.
std::string ew_program_str(const OpCall& call);

void ew_chain_ref(const OpCall& call, float* const* buf, int rank, int width);
void ew_chain_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
