// The window attributes shared by Conv, ConvTranspose, MaxPool and AveragePool (kernel_shape, strides,
// dilations, pads, auto_pad), read per axis into one Window2d; auto_pad SAME_* / VALID become explicit pads
// here so the Graph builders only ever see pads.
#include "onnx/ops/window.hpp"

#include <string>

namespace corun::onnx_import {

namespace {
std::vector<int64_t> pair_attr(Converter& c, const char* name, int64_t fallback) {
  std::vector<int64_t> v = c.attr_ints(name);
  if (v.empty()) v = {fallback, fallback};
  if (v.size() != 2) c.unsupported_attr(name, dims_text(v) + " (2-D windows only: two values)");
  for (int64_t x : v)
    if (x < 1) c.unsupported_attr(name, dims_text(v) + " (each at least 1)");
  return v;
}
}  // namespace

Window2d read_window(Converter& c, const std::vector<int64_t>& weight_kernel, const std::vector<int64_t>& input_hw) {
  Window2d w;
  std::vector<int64_t> k = c.attr_ints("kernel_shape");
  if (k.empty()) k = weight_kernel;
  if (k.size() != 2) c.unsupported_attr("kernel_shape", dims_text(k) + " (2-D windows only: two values)");
  if (!weight_kernel.empty() && k != weight_kernel)
    c.unsupported("kernel_shape " + dims_text(k) + " does not match the weights' " + dims_text(weight_kernel));
  const std::vector<int64_t> s = pair_attr(c, "strides", 1), d = pair_attr(c, "dilations", 1);
  w.kernel = {k[0], k[1]};
  w.stride = {s[0], s[1]};
  w.dilation = {d[0], d[1]};
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> p = c.attr_ints("pads");
  if (auto_pad == "NOTSET") {
    if (p.empty()) p = {0, 0, 0, 0};
    if (p.size() != 4) c.unsupported_attr("pads", dims_text(p) + " (four values: top, left, bottom, right)");
    for (int64_t x : p)
      if (x < 0) c.unsupported_attr("pads", dims_text(p) + " (non-negative only)");
    w.pads = {p[0], p[1], p[2], p[3]};
    return w;
  }
  if (!p.empty()) c.unsupported("both auto_pad " + auto_pad + " and pads: give one of them");
  if (auto_pad == "VALID") return w;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    c.unsupported_attr("auto_pad", auto_pad + " (NOTSET, VALID, SAME_UPPER or SAME_LOWER)");
  // SAME_*: output = ceil(in / stride); the odd pixel of padding goes at the end (UPPER) or start (LOWER).
  for (int a = 0; a < 2; ++a) {
    const int64_t in = input_hw[static_cast<size_t>(a)];
    const int64_t out = (in + w.stride[a] - 1) / w.stride[a];
    const int64_t span = w.dilation[a] * (w.kernel[a] - 1) + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[a] + span - in);
    const int64_t small = total / 2, big = total - small;
    w.pads[a] = auto_pad == "SAME_UPPER" ? small : big;
    w.pads[a + 2] = auto_pad == "SAME_UPPER" ? big : small;
  }
  return w;
}

Conv2dOptions conv_options(const Window2d& w, int64_t groups) {
  Conv2dOptions o;
  o.stride_h = static_cast<int>(w.stride[0]);
  o.stride_w = static_cast<int>(w.stride[1]);
  o.dilation_h = static_cast<int>(w.dilation[0]);
  o.dilation_w = static_cast<int>(w.dilation[1]);
  o.pad_top = static_cast<int>(w.pads[0]);
  o.pad_left = static_cast<int>(w.pads[1]);
  o.pad_bottom = static_cast<int>(w.pads[2]);
  o.pad_right = static_cast<int>(w.pads[3]);
  o.groups = static_cast<int>(groups);
  return o;
}

}  // namespace corun::onnx_import
