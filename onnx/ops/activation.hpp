// onnx/ops/activation.hpp — the converters of activation.cpp: Relu, LeakyRelu, Sigmoid, Tanh, Gelu, HardSigmoid,
// HardSwish. onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_relu(Converter& c);
void convert_leaky_relu(Converter& c);
void convert_sigmoid(Converter& c);
void convert_tanh(Converter& c);
void convert_gelu(Converter& c);
void convert_hard_sigmoid(Converter& c);
void convert_hard_swish(Converter& c);

}  // namespace corun::onnx_import
