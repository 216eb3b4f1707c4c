// Elementwise activations: Relu, LeakyRelu, Sigmoid, Tanh, Gelu (the exact one: opset 20's op, or the
// Div/Erf/Add/Mul/Mul chain of PyTorch's earlier exports, which onnx/gelu_pattern.cpp turns into a Gelu node),
// HardSigmoid and HardSwish (MobileNetV3's; before opset 14 PyTorch exports nn.Hardswish as x * HardSigmoid(x)).
#include "onnx/ops/activation.hpp"

#include <cmath>
#include <string>

namespace corun::onnx_import {

void convert_relu(Converter& c) {
  c.only_attrs({});
  c.set_output(0, c.graph().relu(c.tensor(0), c.value_name()));
}

void convert_leaky_relu(Converter& c) {
  c.only_attrs({"alpha"});
  c.set_output(0, c.graph().leaky_relu(c.tensor(0), c.attr_float("alpha", 0.01f), c.value_name()));
}

void convert_sigmoid(Converter& c) {
  c.only_attrs({});
  c.set_output(0, c.graph().sigmoid(c.tensor(0), c.value_name()));
}

void convert_tanh(Converter& c) {
  c.only_attrs({});
  c.set_output(0, c.graph().tanh(c.tensor(0), c.value_name()));
}

void convert_gelu(Converter& c) {
  c.only_attrs({"approximate"});
  const std::string approximate = c.attr_string("approximate", "none");
  if (approximate != "none") c.unsupported_attr("approximate", approximate + " (none only: the exact erf form)");
  c.set_output(0, c.graph().gelu(c.tensor(0), c.value_name()));
}

void convert_hard_sigmoid(Converter& c) {
  c.only_attrs({"alpha", "beta"});
  const float alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f);
  if (!std::isfinite(alpha)) c.unsupported_attr("alpha", std::to_string(alpha) + " (must be finite)");
  if (!std::isfinite(beta)) c.unsupported_attr("beta", std::to_string(beta) + " (must be finite)");
  c.set_output(0, c.graph().hard_sigmoid(c.tensor(0), alpha, beta, c.value_name()));
}

void convert_hard_swish(Converter& c) {
  c.only_attrs({});
  c.set_output(0, c.graph().hard_swish(c.tensor(0), c.value_name()));
}

}  // namespace corun::onnx_import
