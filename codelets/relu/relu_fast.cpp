// Fast relu over 16-aligned element blocks; the selects vectorise to compare + blend (formulas:
// codelets/elementwise.hpp).
#include "codelets/elementwise.hpp"
#include "codelets/relu/relu.hpp"

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC -O2
// (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide inner
// loops; member blocks are multiples of 16, so the scalar tails run only at the end of the tensor.
constexpr int kBlock = 16;

void relu_span(const float* __restrict x, float* __restrict y, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) y[e + j] = ew::relu(x[e + j]);
  for (; e < n; ++e) y[e] = ew::relu(x[e]);
}

void relu_grad_span(const float* __restrict x, const float* __restrict dy, float* __restrict dx, int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) dx[e + j] = ew::relu_grad(x[e + j], dy[e + j]);
  for (; e < n; ++e) dx[e] = ew::relu_grad(x[e], dy[e]);
}

}  // namespace

void relu_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width, kBlock);
  if (r.size() <= 0) return;
  relu_span(buf[0] + r.begin, buf[1] + r.begin, r.size());
}

void relu_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width, kBlock);
  if (r.size() <= 0) return;
  relu_grad_span(buf[0] + r.begin, buf[1] + r.begin, buf[2] + r.begin, r.size());
}

}  // namespace corun::codelets
