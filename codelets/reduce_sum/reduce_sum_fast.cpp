// Fast reduce_sum: 16 f32 partial sums (lane j adds elements j, j + 16, ...; a vector loop), combined in
// lane order, then the tail. One member does it all; the order depends only on the element count.
#include "codelets/reduce_sum/reduce_sum.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

constexpr int kLanes = 16;

}  // namespace

void reduce_sum_fast(const OpCall& call, float* const* buf, int rank, int /*width*/) {
  if (rank != 0) return;
  const int64_t n = numel(call, 0);
  const float* __restrict x = buf[0];
  float lane[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t e = 0; e < whole; e += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += x[e + j];
  float acc = 0.0f;
  for (int j = 0; j < kLanes; ++j) acc += lane[j];
  for (int64_t e = whole; e < n; ++e) acc += x[e];
  buf[1][0] = call.f * acc;
}

void reduce_sum_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Range r = split_range(numel(call, 1), rank, width, kLanes);
  if (r.size() <= 0) return;
  std::fill(buf[1] + r.begin, buf[1] + r.end, call.f * buf[0][0]);
}

}  // namespace corun::codelets
