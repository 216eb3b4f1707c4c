// add: C = A + B. Buffers A, B, C. B has A's shape, or is 1-D of A's last extent (a bias added to every
// row of A).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void add_ref(const OpCall& call, float* const* buf, int rank, int width);
void add_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
