// reshape: Y = X with another shape of the same element count (C order, so a copy); buffers X, Y. The
// graph's values own fixed-shape buffers, so flattening [N,C,H,W] to [N, C*H*W] for a dense layer is a
// copy (its backward is the reverse reshape). Members split the elements.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void reshape_ref(const OpCall& call, float* const* buf, int rank, int width);
void reshape_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
