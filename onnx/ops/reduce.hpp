// onnx/ops/reduce.hpp — the converters of reduce.cpp: ReduceMean, ReduceSum, GlobalAveragePool.
// onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_reduce_mean(Converter& c);
void convert_reduce_sum(Converter& c);
void convert_global_average_pool(Converter& c);

}  // namespace corun::onnx_import
