// add_n: Y = X0 + X1 + ... + Xk-1, all the same shape, summed left to right (PathNet sums its modules'
// outputs). Buffers X0..Xk-1, Y. Members split the elements.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void add_n_ref(const OpCall& call, float* const* buf, int rank, int width);
void add_n_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
