// onnx/ops/ops.hpp — the converters, one file per ONNX op family; registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

// activation.cpp
void convert_relu(Converter& c);
void convert_leaky_relu(Converter& c);
void convert_sigmoid(Converter& c);
void convert_tanh(Converter& c);
void convert_gelu(Converter& c);
// conv.cpp
void convert_conv(Converter& c);
// pool.cpp
void convert_max_pool(Converter& c);
void convert_average_pool(Converter& c);
// gemm.cpp
void convert_gemm(Converter& c);
void convert_matmul(Converter& c);
// binary.cpp
void convert_add(Converter& c);
void convert_sub(Converter& c);
void convert_mul(Converter& c);
void convert_div(Converter& c);
void convert_pow(Converter& c);
// unary.cpp
void convert_sqrt(Converter& c);
void convert_erf(Converter& c);
void convert_exp(Converter& c);
void convert_log(Converter& c);
void convert_neg(Converter& c);
void convert_abs(Converter& c);
void convert_reciprocal(Converter& c);
void convert_clip(Converter& c);
// reduce.cpp
void convert_reduce_mean(Converter& c);
void convert_reduce_sum(Converter& c);
void convert_global_average_pool(Converter& c);
// norm.cpp
void convert_batch_norm(Converter& c);
void convert_layer_norm(Converter& c);
// rnn.cpp
void convert_lstm(Converter& c);
void convert_gru(Converter& c);
// layout.cpp
void convert_concat(Converter& c);
void convert_split(Converter& c);
void convert_slice(Converter& c);
void convert_reshape(Converter& c);
void convert_flatten(Converter& c);
void convert_identity(Converter& c);
// constant.cpp (folded at import)
void convert_constant(Converter& c);
void convert_shape(Converter& c);
void convert_gather(Converter& c);
void convert_unsqueeze(Converter& c);
void convert_cast(Converter& c);

}  // namespace corun::onnx_import

namespace corun::onnx_import {
/// The one window the Graph's conv2d / max_pool / avg_pool take: a square kernel, equal strides, the same
/// pad on all four sides (conv.cpp). `kernel` from the weights for Conv, from kernel_shape for pools.
struct SquareWindow {
  int kernel = 1, stride = 1, pad = 0;
};
SquareWindow square_window(Converter& c, int64_t weight_r, int64_t weight_s);
}  // namespace corun::onnx_import
