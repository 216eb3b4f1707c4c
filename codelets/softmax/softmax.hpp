// softmax and log_softmax along one dim (ONNX opset 13 Softmax / LogSoftmax, PyTorch's dim=): X viewed as
// [outer, n, inner] around dim i[0]; each of the outer * inner lanes is normalised over its n elements.
//   softmax:          Y = exp(X - max) / sum(exp(X - max))                   buffers X, Y
//   log_softmax:      Y = X - max - log(sum(exp(X - max)))                   buffers X, Y
//   softmax_grad:     dX = Y * (dY - sum(dY * Y))                            buffers Y, dY, dX
//   log_softmax_grad: dX = dY - exp(Y) * sum(dY)                             buffers Y, dY, dX
// The max subtraction keeps exp in range for any input. Members own contiguous blocks of lanes (never a
// lane's n elements, the reduction), so the result is the same at every width.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void softmax_ref(const OpCall& call, float* const* buf, int rank, int width);
void softmax_fast(const OpCall& call, float* const* buf, int rank, int width);
void log_softmax_ref(const OpCall& call, float* const* buf, int rank, int width);
void log_softmax_fast(const OpCall& call, float* const* buf, int rank, int width);
void softmax_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void softmax_grad_fast(const OpCall& call, float* const* buf, int rank, int width);
void log_softmax_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void log_softmax_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
