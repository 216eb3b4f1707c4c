// Add, Sub, Mul, Div, Pow: the Graph's ops with numpy (ONNX multidirectional) broadcasting. A scalar
// constant operand (PyTorch's x / 2, x ** 2) is a [1] tensor, which broadcasts the same way. Shapes that do
// not broadcast are refused by the Graph's shape rule, which the importer reports with the node's name.
#include "onnx/ops/ops.hpp"

namespace corun::onnx_import {

namespace {

using BinaryBuilder = Tensor (Graph::*)(Tensor, Tensor, const std::string&);

void convert_broadcasting(Converter& c, BinaryBuilder op) {
  c.only_attrs({});
  if (c.num_inputs() != 2) c.unsupported("it has " + std::to_string(c.num_inputs()) + " inputs instead of 2");
  const Tensor a = c.operand(0), b = c.operand(1);
  c.set_output(0, (c.graph().*op)(a, b, c.value_name()));
}

}  // namespace

void convert_add(Converter& c) {
  convert_broadcasting(c, &Graph::add);
}
void convert_sub(Converter& c) {
  convert_broadcasting(c, &Graph::sub);
}
void convert_mul(Converter& c) {
  convert_broadcasting(c, &Graph::mul);
}
void convert_div(Converter& c) {
  convert_broadcasting(c, &Graph::div);
}
void convert_pow(Converter& c) {
  convert_broadcasting(c, &Graph::pow);
}

}  // namespace corun::onnx_import
