// Conv: the Graph's conv2d (square kernel, equal strides, symmetric pads, group 1). Anything else is an
// "unsupported attribute" error until the general convolution lands.
#include "onnx/ops/ops.hpp"

#include "graphs/graph_impl.hpp"

namespace corun::onnx_import {

namespace {
std::string list_text(const std::vector<int64_t>& v) { return dims_text(v); }
}  // namespace

SquareWindow square_window(Converter& c, int64_t weight_r, int64_t weight_s) {
  std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (k.empty() && weight_r > 0) k = {weight_r, weight_s};
  if (k.size() != 2) c.unsupported_attr("kernel_shape", list_text(k) + " (2-D windows only)");
  if (k[0] != k[1]) c.unsupported_attr("kernel_shape", list_text(k) + " (square kernels only)");
  if (weight_r > 0 && (k[0] != weight_r || k[1] != weight_s))
    c.unsupported("kernel_shape " + list_text(k) + " does not match the weights' " + list_text({weight_r, weight_s}));
  std::vector<int64_t> s = c.attr_ints("strides");
  if (s.empty()) s = {1, 1};
  if (s.size() != 2 || s[0] != s[1] || s[0] < 1) c.unsupported_attr("strides", list_text(s) + " (equal strides only)");
  std::vector<int64_t> d = c.attr_ints("dilations");
  for (int64_t x : d)
    if (x != 1) c.unsupported_attr("dilations", list_text(d) + " (1 only)");
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") c.unsupported_attr("auto_pad", auto_pad + " (NOTSET or VALID)");
  std::vector<int64_t> p = c.attr_ints("pads");
  if (p.empty()) p = {0, 0, 0, 0};
  if (p.size() != 4 || p[0] != p[1] || p[0] != p[2] || p[0] != p[3] || p[0] < 0)
    c.unsupported_attr("pads", list_text(p) + " (the same pad on every side only)");
  if (auto_pad == "VALID" && p[0] != 0) c.unsupported("auto_pad VALID with non-zero pads");
  return {static_cast<int>(k[0]), static_cast<int>(s[0]), static_cast<int>(p[0])};
}

void convert_conv(Converter& c) {
  c.only_attrs({"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"});
  if (c.attr_int("group", 1) != 1) c.unsupported_attr("group", std::to_string(c.attr_int("group", 1)) + " (1 only)");
  const std::vector<int64_t> wd = c.input_dims(1);
  if (wd.size() != 4) c.unsupported("weights of shape " + dims_text(wd) + " (2-D convolutions, [K, C, R, S], only)");
  const SquareWindow win = square_window(c, wd[2], wd[3]);
  Graph& g = c.graph();
  const Tensor x = c.tensor(0);
  const Tensor w = c.tensor(1);
  Tensor b;
  if (c.has_input(2)) {
    b = c.tensor(2);
  } else {
    // conv2d always adds a bias: a zero constant one (not a parameter: the file has none to train).
    const Shape shape{wd[0]};
    b = g.value(g.impl().add_value(shape, c.value_name() + ".zero_bias", ValueKind::constant));
  }
  c.set_output(0, g.conv2d(x, w, b, win.stride, win.pad, c.value_name()));
}

}  // namespace corun::onnx_import
