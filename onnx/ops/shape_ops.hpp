// onnx/ops/shape_ops.hpp — the converters of shape_ops.cpp: Transpose, Softmax, LogSoftmax, Dropout.
// onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_transpose(Converter& c);
void convert_softmax(Converter& c);
void convert_log_softmax(Converter& c);
void convert_dropout(Converter& c);

}  // namespace corun::onnx_import
