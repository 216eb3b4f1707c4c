// onnx/ops/layout.hpp — the converters of layout.cpp: Concat, Split, Slice, Pad, Reshape, Flatten, Identity.
// onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_concat(Converter& c);
void convert_split(Converter& c);
void convert_slice(Converter& c);
void convert_pad(Converter& c);
void convert_reshape(Converter& c);
void convert_flatten(Converter& c);
void convert_identity(Converter& c);

}  // namespace corun::onnx_import
