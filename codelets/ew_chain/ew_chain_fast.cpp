// Fast ew_chain: this member's 16-aligned element range is processed in blocks of kChunk elements; each
// instruction runs as one loop over the block, reading inputs in place and results from a per-instruction
// scratch block on the stack (the last instruction writes the output directly). Intermediates never leave
// the cache, and one task replaces a chain of tasks.
#include "codelets/elementwise.hpp"
#include "codelets/ew_chain/ew_chain.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

// 16 floats = one cache line, as in the single-op kernels. GCC -O2 (the "very cheap" vectoriser) only
// vectorises loops with a known trip count, hence the 16-wide inner loops and scalar tails.
constexpr int kBlock = 16;
// Scratch per instruction: 16 instructions x 256 floats = 16 KiB of stack, within L1 together with the
// inputs' blocks.
constexpr int64_t kChunk = 256;

template <class F>
void unary(F f, const float* __restrict x, float* __restrict y, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) y[e + j] = f(x[e + j]);
  for (; e < n; ++e) y[e] = f(x[e]);
}

// a and b may be the same block (mul(t, t)); restrict only promises that y aliases neither.
template <class F>
void binary(F f, const float* __restrict a, const float* __restrict b, float* __restrict y, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) y[e + j] = f(a[e + j], b[e + j]);
  for (; e < n; ++e) y[e] = f(a[e], b[e]);
}

// Lambdas, not function pointers, so every loop body is inlined and the arithmetic ones vectorise.
void apply_fast(OpKind op, const float* a, const float* b, float* y, int64_t n) {
  switch (op) {
    case OpKind::add: return binary([](float p, float q) { return p + q; }, a, b, y, n);
    case OpKind::sub: return binary([](float p, float q) { return p - q; }, a, b, y, n);
    case OpKind::mul: return binary([](float p, float q) { return p * q; }, a, b, y, n);
    case OpKind::sigmoid: return unary([](float x) { return ew::sigmoid_fast(x); }, a, y, n);
    case OpKind::tanh: return unary([](float x) { return ew::tanh_fast(x); }, a, y, n);
    case OpKind::relu: return unary([](float x) { return ew::relu(x); }, a, y, n);
    case OpKind::sigmoid_grad: return binary([](float p, float q) { return ew::sigmoid_grad_fast(p, q); }, a, b, y, n);
    case OpKind::tanh_grad: return binary([](float p, float q) { return ew::tanh_grad_fast(p, q); }, a, b, y, n);
    case OpKind::relu_grad: return binary([](float p, float q) { return ew::relu_grad(p, q); }, a, b, y, n);
    default: return;  // check_ew_program rejects every other kind
  }
}

}  // namespace

void ew_chain_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int n_in = call.nbuffers() - 1;
  const int n = static_cast<int>(call.program.size()) / kEwFields;
  const Range r = split_range(numel(call, n_in), rank, width, kBlock);
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
