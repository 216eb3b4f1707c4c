// The converter table: one row per ONNX op_type (docs/onnx.md shows the same subsets). Wiring an op is one
// converter function in its family's file and one row here.
#include "onnx/ops/activation.hpp"
#include "onnx/ops/binary.hpp"
#include "onnx/ops/constant.hpp"
#include "onnx/ops/conv.hpp"
#include "onnx/ops/gemm.hpp"
#include "onnx/ops/layout.hpp"
#include "onnx/ops/norm.hpp"
#include "onnx/ops/pool.hpp"
#include "onnx/ops/reduce.hpp"
#include "onnx/ops/rnn.hpp"
#include "onnx/ops/shape_ops.hpp"
#include "onnx/ops/unary.hpp"

#include <string>

namespace corun::onnx_import {

const std::vector<OpRow>& op_table() {
  static const std::vector<OpRow> table = {
      {"Relu", convert_relu, "any shape"},
      {"LeakyRelu", convert_leaky_relu, "any alpha"},
      {"Sigmoid", convert_sigmoid, "any shape"},
      {"Tanh", convert_tanh, "any shape"},
      {"Gelu", convert_gelu, "approximate none; also PyTorch's Div/Erf/Add/Mul/Mul export of nn.GELU"},
      {"HardSigmoid", convert_hard_sigmoid, "any finite alpha and beta"},
      {"HardSwish", convert_hard_swish, "any shape"},
      {"Conv", convert_conv,
       "2-D NCHW, any kernel, per-axis strides and dilations, asymmetric pads, group (depthwise), optional bias, "
       "auto_pad NOTSET/VALID/SAME_UPPER/SAME_LOWER"},
      {"ConvTranspose", convert_conv_transpose,
       "2-D NCHW, per-axis strides and dilations, asymmetric pads, group, optional bias, output_padding, "
       "output_shape (turned into pads; one needing more than output_padding is refused), auto_pad"},
      {"MaxPool", convert_max_pool,
       "2-D, any kernel, per-axis strides, asymmetric pads (each below the kernel), auto_pad, ceil_mode, "
       "dilations 1, storage_order 0, no Indices output"},
      {"AveragePool", convert_average_pool,
       "2-D, any kernel, per-axis strides, asymmetric pads (each below the kernel), auto_pad, ceil_mode, "
       "count_include_pad, dilations 1"},
      {"Gemm", convert_gemm, "2-D A and B, transA/transB, alpha = beta = 1, C absent, [N], [1, N] or [M, N]"},
      {"MatMul", convert_matmul, "numpy MatMul: rank 1 to 4 operands, broadcast batch dims"},
      {"Transpose", convert_transpose, "any perm (default: reversed dims)"},
      {"Softmax", convert_softmax, "any axis (opset < 13: flattened to 2-D at axis, as the spec says)"},
      {"LogSoftmax", convert_log_softmax, "any axis (opset < 13: flattened to 2-D at axis, as the spec says)"},
      {"Dropout", convert_dropout,
       "constant ratio (input or attribute) and training_mode; without training_mode, active when the import is "
       "for training; seed attribute or one per node; no mask output"},
      {"Add", convert_add, "numpy broadcasting (a scalar constant is a [1])"},
      {"Sub", convert_sub, "numpy broadcasting (a scalar constant is a [1])"},
      {"Mul", convert_mul, "numpy broadcasting (a scalar constant is a [1])"},
      {"Div", convert_div, "numpy broadcasting (a scalar constant is a [1])"},
      {"Pow", convert_pow, "numpy broadcasting, float exponent (a scalar constant is a [1])"},
      {"Sqrt", convert_sqrt, "any shape"},
      {"Erf", convert_erf, "any shape"},
      {"Exp", convert_exp, "any shape"},
      {"Log", convert_log, "any shape"},
      {"Neg", convert_neg, "any shape"},
      {"Abs", convert_abs, "any shape"},
      {"Reciprocal", convert_reciprocal, "any shape"},
      {"Clip", convert_clip, "constant scalar min/max inputs (either may be absent); min <= max"},
      {"ReduceMean", convert_reduce_mean, "constant axes (attribute or input), keepdims, noop_with_empty_axes"},
      {"ReduceSum", convert_reduce_sum, "constant axes (attribute or input), keepdims, noop_with_empty_axes"},
      {"GlobalAveragePool", convert_global_average_pool, "rank 3 or 4 [N, C, spatial...]"},
      {"BatchNormalization", convert_batch_norm,
       "rank 2 to 4, scale/B/mean/var [C] initializers, any epsilon/momentum, spatial 1; training mode when the "
       "import is for training (running statistics as state tensors) or training_mode = 1"},
      {"LayerNormalization", convert_layer_norm, "any axis, optional B, stash_type 1, optional Mean/InvStdDev"},
      {"LSTM", convert_lstm,
       "default activations, no clip, layout 0, input_forget 0, no sequence_lens, no peepholes, any direction"},
      {"GRU", convert_gru,
       "linear_before_reset 1 (PyTorch's), default activations, no clip, layout 0, no sequence_lens, any direction"},
      {"Concat", convert_concat, "any axis, 1-D to 4-D"},
      {"Split", convert_split, "any axis, sizes from the input/attribute or equal parts"},
      {"Slice", convert_slice, "constant starts/ends/axes on one axis, step 1"},
      {"Pad", convert_pad, "mode constant (constant_value any scalar, 0 by default; a negative pad crops), reflect (each pad below "
       "the extent) or edge (pads >= 0); constant pads and axes"},
      {"Reshape", convert_reshape, "a constant shape (0 copies, -1 infers), allowzero 0"},
      {"Flatten", convert_flatten, "any axis"},
      {"Identity", convert_identity, "any tensor"},
      {"Constant", convert_constant, "value (tensor), value_float(s), value_int(s)"},
      {"Shape", convert_shape, "folded at import (start/end)"},
      {"Gather", convert_gather,
       "any axis; constant data and indices folded at import; a graph value (or a parameter table) with "
       "constant or computed indices, result of rank 1 to 4"},
      {"Unsqueeze", convert_unsqueeze, "constant data (folded) or a tensor (as a reshape)"},
      {"Cast", convert_cast, "constants (folded); tensors to FLOAT"},
      {"Expand", convert_expand, "constant shape; constant data folded, a graph value as an add of zeros"},
      {"ConstantOfShape", convert_constant_of_shape, "a constant shape, folded at import"},
  };
  return table;
}

const OpRow* find_op(const std::string& op_type) {
  for (const OpRow& r : op_table())
    if (op_type == r.op_type) return &r;
  return nullptr;
}

}  // namespace corun::onnx_import
