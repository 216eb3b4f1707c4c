// Add, Sub, Mul, Div, Pow: the Graph's ops with numpy (ONNX multidirectional) broadcasting. A scalar
// constant operand (PyTorch's x / 2, x ** 2) is a [1] tensor, which broadcasts the same way. Shapes that do
// not broadcast are refused by the Graph's shape rule, which the importer reports with the node's name.
// Two constants fold at import (fold_constants).
#include "onnx/ops/binary.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace corun::onnx_import {

namespace {

using BinaryBuilder = Tensor (Graph::*)(Tensor, Tensor, const std::string&);

// Two constants known at import (shape arithmetic: PyTorch's chunk() exports its split points as
// Shape -> Gather -> Add -> Div -> Mul before a Slice) fold when their shapes are equal or one holds a single
// value; integers keep integer semantics (Div truncates, as ONNX's integer Div). false: not folded.
template <typename Fn>
bool fold_constants(Converter& c, Fn fn) {
  if (!c.foldable(0) || !c.foldable(1)) return false;
  const Constant &a = *c.constant(0), &b = *c.constant(1);
  if (!(a.dims == b.dims || a.numel() == 1 || b.numel() == 1)) return false;
  Constant out;
  out.integer = a.integer && b.integer;
  out.dims = a.numel() == 1 && b.numel() != 1 ? b.dims : a.dims.size() >= b.dims.size() ? a.dims : b.dims;
  const int64_t n = std::max(a.numel(), b.numel());
  for (int64_t i = 0; i < n; ++i) {
    const double x = a.values[static_cast<size_t>(a.numel() == 1 ? 0 : i)];
    const double y = b.values[static_cast<size_t>(b.numel() == 1 ? 0 : i)];
    const double v = fn(x, y);
    out.values.push_back(out.integer ? std::trunc(v) : v);
  }
  c.set_output(0, std::move(out));
  return true;
}

void convert_broadcasting(Converter& c, BinaryBuilder op) {
  c.only_attrs({});
  if (c.num_inputs() != 2) c.unsupported("it has " + std::to_string(c.num_inputs()) + " inputs instead of 2");
  const std::string& k = c.node().op_type();
  const bool folded =
      k == "Add"   ? fold_constants(c, [](double x, double y) { return x + y; })
      : k == "Sub" ? fold_constants(c, [](double x, double y) { return x - y; })
      : k == "Mul" ? fold_constants(c, [](double x, double y) { return x * y; })
      : k == "Div" ? fold_constants(c, [](double x, double y) { return x / y; })
                   : fold_constants(c, [](double x, double y) { return std::pow(x, y); });
  if (folded) return;
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
