// onnx/ops/pool.hpp — the converters of pool.cpp: MaxPool, AveragePool. onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_max_pool(Converter& c);
void convert_average_pool(Converter& c);

}  // namespace corun::onnx_import
