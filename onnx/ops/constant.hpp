// onnx/ops/constant.hpp — the converters of constant.cpp: Constant, Shape, Gather, Unsqueeze, ConstantOfShape, Cast,
// Expand (folded at import when their inputs are known; Gather and Expand of graph values too).
// onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_constant(Converter& c);
void convert_shape(Converter& c);
void convert_gather(Converter& c);
void convert_unsqueeze(Converter& c);
void convert_constant_of_shape(Converter& c);
void convert_cast(Converter& c);
void convert_expand(Converter& c);

}  // namespace corun::onnx_import
