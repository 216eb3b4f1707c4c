// split: Y0..Yk-1 = split(X) along dim i[0]; buffers X, Y0..Yk-1. The inverse of concat: every tensor is
// viewed as [outer, extent_d * inner] rows, and X's row is the Yi's rows laid end to end.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void split_ref(const OpCall& call, float* const* buf, int rank, int width);
void split_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
