// onnx/ops/conv.hpp — the converters of conv.cpp: Conv, ConvTranspose. onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_conv(Converter& c);
void convert_conv_transpose(Converter& c);

}  // namespace corun::onnx_import
