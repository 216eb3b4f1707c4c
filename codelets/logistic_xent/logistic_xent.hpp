// logistic_xent: L = softplus(Z) - T * Z, the binary cross-entropy of sigmoid(Z) against targets T in
// [0, 1], elementwise; buffers Z (R), T (R), L (W), all the same shape. Computed as
// max(Z, 0) - T * Z + log1p(exp(-|Z|)), which never overflows.
// logistic_xent_grad: dZ = (sigmoid(Z) - T) * dL; buffers Z (R), T (R), dL (R), dZ (W).
// Both split elements (no reduction: the mean over the batch is a separate reduce_sum node).
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void logistic_xent_ref(const OpCall& call, float* const* buf, int rank, int width);
void logistic_xent_fast(const OpCall& call, float* const* buf, int rank, int width);
void logistic_xent_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void logistic_xent_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
