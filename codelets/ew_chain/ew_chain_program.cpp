// ew_chain program validation and printing (shared by the graph pass, the DOT writer and the tests).
#include "codelets/ew_chain/ew_chain.hpp"

#include "base/check.hpp"

namespace corun::codelets {

int ew_arity(OpKind kind) {
  const int k = static_cast<int>(kind);
  return k >= 0 && k < static_cast<int>(OpKind::count_) ? op_info(kind).ew_arity : 0;
}

void check_ew_program(const OpCall& call) {
  auto bad = [](const std::string& what) { detail::fail(Status::invalid_argument, "ew_chain: " + what); };
  if (call.kind != OpKind::ew_chain) bad("the call is not an ew_chain");
  const int nbuf = call.nbuffers();
  if (nbuf < 2 || static_cast<int>(call.modes.size()) != nbuf) bad("needs at least one input and one output buffer");
  for (int b = 0; b < nbuf; ++b) {
    if (call.modes[static_cast<size_t>(b)] != (b + 1 < nbuf ? Access::read : Access::write))
      bad("buffer " + std::to_string(b) + " must be " + (b + 1 < nbuf ? "read" : "written") + " (inputs, then the output)");
    if (call.shapes[static_cast<size_t>(b)] != call.shapes[0])
      bad("buffer " + std::to_string(b) + " has shape " + call.shapes[static_cast<size_t>(b)].str() + ", buffer 0 " +
          call.shapes[0].str() + " (all must agree)");
  }
  const auto& p = call.program;
  const int n = static_cast<int>(p.size()) / kEwFields;
  if (p.empty() || p.size() % kEwFields != 0) bad("the program must be a non-empty list of {op, a, b} triples");
  if (n > kMaxEwInstructions)
    bad(std::to_string(n) + " instructions, at most " + std::to_string(kMaxEwInstructions) + " are allowed");
  const int n_in = nbuf - 1;
  for (int k = 0; k < n; ++k) {
    const int32_t op = p[static_cast<size_t>(k * kEwFields)];
    const int arity = op >= 0 && op < static_cast<int>(OpKind::count_) ? ew_arity(static_cast<OpKind>(op)) : 0;
    if (arity == 0) bad("instruction " + std::to_string(k) + ": op " + std::to_string(op) + " is not chainable");
    for (int j = 0; j < 2; ++j) {
      const int32_t arg = p[static_cast<size_t>(k * kEwFields + 1 + j)];
      const bool ok = j < arity ? arg >= 0 && arg < n_in + k : arg == -1;
      if (!ok)
        bad("instruction " + std::to_string(k) + ": operand " + std::to_string(j) + " is " + std::to_string(arg) +
            (j < arity ? ", not an input (0.." + std::to_string(n_in - 1) + ") or an earlier result"
                       : ", must be -1 for a one-operand op"));
    }
  }
}

std::string ew_program_str(const OpCall& call) {
  const int n_in = call.nbuffers() - 1;
  const int n = static_cast<int>(call.program.size()) / kEwFields;
  auto operand = [&](int32_t arg) { return (arg < n_in ? "x" : "t") + std::to_string(arg < n_in ? arg : arg - n_in); };
  std::string s;
  for (int k = 0; k < n; ++k) {
    const int32_t* ins = &call.program[static_cast<size_t>(k * kEwFields)];
    s += (k ? "; t" : "t") + std::to_string(k) + " = " + op_info(static_cast<OpKind>(ins[0])).name + "(" + operand(ins[1]);
    s += (ins[2] >= 0 ? ", " + operand(ins[2]) : std::string()) + ")";
  }
  return s;
}

}  // namespace corun::codelets
