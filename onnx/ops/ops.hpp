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
void convert_hard_sigmoid(Converter& c);
void convert_hard_swish(Converter& c);
// conv.cpp
void convert_conv(Converter& c);
void convert_conv_transpose(Converter& c);
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
void convert_pad(Converter& c);
void convert_reshape(Converter& c);
void convert_flatten(Converter& c);
void convert_identity(Converter& c);
// shape_ops.cpp
void convert_transpose(Converter& c);
void convert_softmax(Converter& c);
void convert_log_softmax(Converter& c);
void convert_dropout(Converter& c);
// constant.cpp (folded at import; Gather of graph values too)
void convert_constant(Converter& c);
void convert_shape(Converter& c);
void convert_gather(Converter& c);
void convert_unsqueeze(Converter& c);
void convert_cast(Converter& c);
// issue 19: the transformer and text-similarity exports
void convert_expand(Converter& c);
void convert_constant_of_shape(Converter& c);

}  // namespace corun::onnx_import

#include <corun/window_options.hpp>

#include <array>

namespace corun::onnx_import {
/// A 2-D window's attributes, per axis ([0] = H, [1] = W); pads are (top, left, bottom, right) with any
/// auto_pad already resolved (window.cpp).
struct Window2d {
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, dilation{1, 1};
  std::array<int64_t, 4> pads{0, 0, 0, 0};
};
/// Reads kernel_shape (or `weight_kernel`, the weights' [R, S], when absent; empty for pools), strides,
/// dilations, pads and auto_pad; `input_hw` sizes the SAME_* pads.
Window2d read_window(Converter& c, const std::vector<int64_t>& weight_kernel, const std::vector<int64_t>& input_hw);
Conv2dOptions conv_options(const Window2d& w, int64_t groups);
}  // namespace corun::onnx_import
