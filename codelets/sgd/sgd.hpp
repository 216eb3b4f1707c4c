// sgd: W -= f * G (f is the learning rate); buffers W (readwrite), G.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void sgd_ref(const OpCall& call, float* const* buf, int rank, int width);
void sgd_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
