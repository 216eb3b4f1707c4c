// The converter table: one row per ONNX op_type (docs/onnx.md shows the same subsets). Wiring an op is one
// converter function in its family's file and one row here.
#include "onnx/ops/ops.hpp"

#include <string>

namespace corun::onnx_import {

const std::vector<OpRow>& op_table() {
  static const std::vector<OpRow> table = {
      {"Relu", convert_relu, "any shape"},
      {"LeakyRelu", convert_leaky_relu, "any alpha"},
      {"Sigmoid", convert_sigmoid, "any shape"},
      {"Tanh", convert_tanh, "any shape"},
      {"Gelu", convert_gelu, "approximate none; also PyTorch's Div/Erf/Add/Mul/Mul export of nn.GELU"},
      {"Conv", convert_conv,
       "2-D NCHW, square kernel, equal strides, the same pad on every side, dilations 1, group 1, auto_pad NOTSET"},
      {"MaxPool", convert_max_pool,
       "2-D, square kernel, equal strides, the same pad on every side, dilations 1, ceil_mode 0, storage_order 0, "
       "no Indices output"},
      {"AveragePool", convert_average_pool,
       "2-D, square kernel, equal strides, the same pad on every side, ceil_mode 0, count_include_pad 0"},
      {"Gemm", convert_gemm, "2-D A and B, transA/transB, alpha = beta = 1, C absent, [N], [1, N] or [M, N]"},
      {"MatMul", convert_matmul, "2-D A and B"},
      {"Add", convert_add, "same shapes, or one operand 1-D (or [1, N]) of the other's last extent"},
      {"Sub", convert_sub, "same shapes"},
      {"Mul", convert_mul, "same shapes"},
      {"Concat", convert_concat, "any axis, 1-D to 4-D"},
      {"Split", convert_split, "any axis, sizes from the input/attribute or equal parts"},
      {"Slice", convert_slice, "constant starts/ends/axes on one axis, step 1"},
      {"Reshape", convert_reshape, "a constant shape (0 copies, -1 infers), allowzero 0"},
      {"Flatten", convert_flatten, "any axis"},
      {"Identity", convert_identity, "any tensor"},
      {"Constant", convert_constant, "value (tensor), value_float(s), value_int(s)"},
      {"Shape", convert_shape, "folded at import (start/end)"},
      {"Gather", convert_gather, "constant data and indices, folded at import"},
      {"Unsqueeze", convert_unsqueeze, "constant data (folded) or a tensor (as a reshape)"},
      {"Cast", convert_cast, "constants (folded); tensors to FLOAT"},
  };
  return table;
}

const OpRow* find_op(const std::string& op_type) {
  for (const OpRow& r : op_table())
    if (op_type == r.op_type) return &r;
  return nullptr;
}

}  // namespace corun::onnx_import
