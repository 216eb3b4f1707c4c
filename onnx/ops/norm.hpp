// onnx/ops/norm.hpp — the converters of norm.cpp: BatchNormalization, LayerNormalization. onnx/ops/registry.cpp
// lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_batch_norm(Converter& c);
void convert_layer_norm(Converter& c);

}  // namespace corun::onnx_import
