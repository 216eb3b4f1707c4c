// concat: Y = concat(X0..Xk-1) along dim i[0]; buffers X0..Xk-1, Y (Y last). Every tensor is viewed as
// [outer, extent_d * inner] rows, so Y's row is the Xi's rows laid end to end.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void concat_ref(const OpCall& call, float* const* buf, int rank, int width);
void concat_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
