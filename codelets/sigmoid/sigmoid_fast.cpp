// Fast sigmoid in float over 16-aligned element blocks (formulas: codelets/elementwise.hpp).
#include "codelets/elementwise.hpp"
#include "codelets/sigmoid/sigmoid.hpp"

namespace corun::codelets {
namespace {

// 16 floats = one cache line: members never share a line and vector loops see the same alignment. GCC -O2
// (the "very cheap" vectoriser) only vectorises loops with a known trip count, hence the 16-wide inner
// loop of the gradient; the forward loop is bound by the scalar exp calls anyway.
constexpr int kBlock = 16;

void sigmoid_span(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t e = 0; e < n; ++e) y[e] = ew::sigmoid_fast(x[e]);
}

void sigmoid_grad_span(const float* __restrict y, const float* __restrict dy, float* __restrict dx,
                       int64_t n) {
  int64_t e = 0;
  for (; e + kBlock <= n; e += kBlock)
    for (int j = 0; j < kBlock; ++j) dx[e + j] = ew::sigmoid_grad_fast(y[e + j], dy[e + j]);
  for (; e < n; ++e) dx[e] = ew::sigmoid_grad_fast(y[e], dy[e]);
}

}  // namespace

void sigmoid_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width, kBlock);
  if (r.size() <= 0) return;
  sigmoid_span(buf[0] + r.begin, buf[1] + r.begin, r.size());
}

void sigmoid_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 2), rank, width, kBlock);
  if (r.size() <= 0) return;
  sigmoid_grad_span(buf[0] + r.begin, buf[1] + r.begin, buf[2] + r.begin, r.size());
}

}  // namespace corun::codelets
