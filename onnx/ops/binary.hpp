// onnx/ops/binary.hpp — the converters of binary.cpp: Add, Sub, Mul, Div, Pow (numpy broadcasting).
// onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_add(Converter& c);
void convert_sub(Converter& c);
void convert_mul(Converter& c);
void convert_div(Converter& c);
void convert_pow(Converter& c);

}  // namespace corun::onnx_import
