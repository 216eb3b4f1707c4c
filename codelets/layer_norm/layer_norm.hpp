// layer_norm: ONNX LayerNormalization (opset 17) / PyTorch LayerNorm. X is viewed as [R, D]: R the product
// of the extents before axis i[0] (>= 0, already normalised), D the product of the rest (the normalised
// shape).
//   Buffers: X (R), scale (R, normalised shape), bias (R, normalised shape) -> Y (W, X's shape),
//            mean (W, [R]), invstd (W, [R]).  f: epsilon.
//   Per row: mean, biased variance var, invstd = 1 / sqrt(var + eps), Y = (X - mean) invstd scale + bias.
//   Split by rows: a row's reduction stays inside one member.
// layer_norm_grad: buffers X, scale, mean, invstd, dY (R) -> dX (W), dscale (W), dbias (W); i[0] as above.
//   dX[r] = invstd (g - mean_j g - xhat mean_j(g xhat)) with g = scale dY, xhat = (X - mean) invstd (split
//   by rows); dscale[j] = sum_r dY xhat, dbias[j] = sum_r dY: reductions over the rows, split by columns,
//   each member summing all rows of its columns in row order, so the bits never depend on the width.
#pragma once

#include "codelets/op.hpp"

namespace corun::codelets {

void layer_norm_ref(const OpCall& call, float* const* buf, int rank, int width);
void layer_norm_fast(const OpCall& call, float* const* buf, int rank, int width);
void layer_norm_grad_ref(const OpCall& call, float* const* buf, int rank, int width);
void layer_norm_grad_fast(const OpCall& call, float* const* buf, int rank, int width);

/// X viewed as [rows, cols].
struct LayerNormDims {
  int64_t rows, cols;
  LayerNormDims(const Shape& x, int64_t axis) : rows(x.outer(static_cast<int>(axis))), cols(x.numel() / rows) {}
};

}  // namespace corun::codelets
