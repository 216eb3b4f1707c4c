// sub: C = A - B. Buffers A, B, C, all the same shape.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void sub_ref(const OpCall& call, float* const* buf, int rank, int width);
void sub_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
