// onnx/ops/unary.hpp — the converters of unary.cpp: Sqrt, Erf, Exp, Log, Neg, Abs, Reciprocal, Clip.
// onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_sqrt(Converter& c);
void convert_erf(Converter& c);
void convert_exp(Converter& c);
void convert_log(Converter& c);
void convert_neg(Converter& c);
void convert_abs(Converter& c);
void convert_reciprocal(Converter& c);
void convert_clip(Converter& c);

}  // namespace corun::onnx_import
