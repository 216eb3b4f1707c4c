// onnx/ops/gemm.hpp — the converters of gemm.cpp: Gemm, MatMul. onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_gemm(Converter& c);
void convert_matmul(Converter& c);

}  // namespace corun::onnx_import
