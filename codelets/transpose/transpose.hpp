// transpose (ONNX Transpose): Y = X with its dimensions permuted, Y dim d = X dim perm[d] with perm = i[0 ..
// rank-1]. Buffers X (R), Y (W). Members own contiguous blocks of output work items (rows of Y, or tiles
// of rows), so every element is a copy and the result is the same at every width.
#pragma once

#include "codelets/op.hpp"

#include <array>

namespace corun::codelets {

void transpose_ref(const OpCall& call, float* const* buf, int rank, int width);
void transpose_fast(const OpCall& call, float* const* buf, int rank, int width);

/// A transpose with unit dims dropped and adjacent dims that stay adjacent merged (e.g. [B,H,S,D] perm
/// 0,1,3,2 becomes [B*H, D, S]): out[d] are Y's extents, in_stride[d] the stride in X of Y's dim d.
struct TransposePlan {
  int rank = 0;
  std::array<int64_t, 6> out{};
  std::array<int64_t, 6> in_stride{};
};
TransposePlan transpose_plan(const Shape& x, const std::array<int64_t, kMaxIntAttrs>& perm);

}  // namespace corun::codelets
