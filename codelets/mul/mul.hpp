// mul: C = A * B (elementwise). Buffers A, B, C, all the same shape.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void mul_ref(const OpCall& call, float* const* buf, int rank, int width);
void mul_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
