// Elementwise math: Sqrt, Erf, Exp, Log, Neg, Abs, Reciprocal (the Graph's ops of the same names, IEEE
// results outside their domains as ONNX), and Clip with constant bounds (torch.clamp, ReLU6).
#include "onnx/ops/unary.hpp"

#include <cmath>
#include <limits>

namespace corun::onnx_import {

namespace {

using UnaryBuilder = Tensor (Graph::*)(Tensor, const std::string&);

void convert_unary(Converter& c, UnaryBuilder op) {
  c.only_attrs({});
  c.set_output(0, (c.graph().*op)(c.tensor(0), c.value_name()));
}

// Clip's bound `i` (1: min, 2: max) from opset 11's optional constant inputs; absent: no bound.
float clip_bound(Converter& c, int i, float absent) {
  if (!c.has_input(i)) return absent;
  const Constant& k = c.require_constant(i, i == 1 ? "min" : "max");
  if (k.numel() != 1)
    c.unsupported(std::string(i == 1 ? "min" : "max") + " of shape " + dims_text(k.dims) + " (a scalar)");
  const float v = static_cast<float>(k.values[0]);
  if (std::isnan(v)) c.unsupported(std::string(i == 1 ? "min" : "max") + " is NaN");
  return v;
}

}  // namespace

void convert_sqrt(Converter& c) {
  convert_unary(c, &Graph::sqrt);
}
void convert_erf(Converter& c) {
  convert_unary(c, &Graph::erf);
}
void convert_exp(Converter& c) {
  convert_unary(c, &Graph::exp);
}
void convert_log(Converter& c) {
  convert_unary(c, &Graph::log);
}
void convert_neg(Converter& c) {
  convert_unary(c, &Graph::neg);
}
void convert_abs(Converter& c) {
  convert_unary(c, &Graph::abs);
}
void convert_reciprocal(Converter& c) {
  convert_unary(c, &Graph::reciprocal);
}

void convert_clip(Converter& c) {
  // Opset 11+ (the importer's range) takes min and max as inputs; the min/max attributes are opset 6's.
  c.only_attrs({});
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float lo = clip_bound(c, 1, -kInf), hi = clip_bound(c, 2, kInf);
  if (lo > hi) c.unsupported("min " + std::to_string(lo) + " is above max " + std::to_string(hi));
  c.set_output(0, c.graph().clip(c.tensor(0), lo, hi, c.value_name()));
}

}  // namespace corun::onnx_import
