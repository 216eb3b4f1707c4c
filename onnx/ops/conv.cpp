// Conv and ConvTranspose: the Graph's general conv2d / conv_transpose2d (per-axis strides and dilations,
// asymmetric pads, groups, optional bias). auto_pad and ConvTranspose's output_shape become pads here.
#include "onnx/ops/conv.hpp"
#include "onnx/ops/window.hpp"

#include <string>

namespace corun::onnx_import {

namespace {
// The input must be NCHW and the weights [A, B, R, S]; returns the weights' dims.
std::vector<int64_t> check_conv_operands(Converter& c) {
  const std::vector<int64_t> xd = c.input_dims(0), wd = c.input_dims(1);
  if (xd.size() != 4) c.unsupported("input of shape " + dims_text(xd) + " (2-D convolutions of NCHW tensors only)");
  if (wd.size() != 4) c.unsupported("weights of shape " + dims_text(wd) + " (2-D convolutions, 4-D weights, only)");
  return wd;
}

int64_t read_groups(Converter& c) {
  const int64_t groups = c.attr_int("group", 1);
  if (groups < 1) c.unsupported_attr("group", std::to_string(groups) + " (at least 1)");
  return groups;
}

Tensor optional_bias(Converter& c) {
  return c.has_input(2) ? c.tensor(2) : Tensor();
}
}  // namespace

void convert_conv(Converter& c) {
  c.only_attrs({"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"});
  const std::vector<int64_t> wd = check_conv_operands(c), xd = c.input_dims(0);
  const int64_t groups = read_groups(c);
  if (xd[1] != wd[1] * groups)
    c.unsupported("input channels " + std::to_string(xd[1]) + " but weights " + dims_text(wd) + " with group " +
                  std::to_string(groups) + " (the weights' dim 1 times group must equal the input channels)");
  const Window2d w = read_window(c, {wd[2], wd[3]}, {xd[2], xd[3]});
  c.set_output(0,
               c.graph().conv2d(c.tensor(0), c.tensor(1), optional_bias(c), conv_options(w, groups), c.value_name()));
}

void convert_conv_transpose(Converter& c) {
  c.only_attrs({"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad", "output_padding", "output_shape"});
  const std::vector<int64_t> wd = check_conv_operands(c), xd = c.input_dims(0);
  const int64_t groups = read_groups(c);
  if (xd[1] != wd[0])
    c.unsupported("input channels " + std::to_string(xd[1]) + " but weights " + dims_text(wd) +
                  " (ConvTranspose weights are [C_in, C_out / group, R, S])");
  // SAME_* for ConvTranspose means output = input * stride: read_window's Conv pads are replaced below
  // by the ones that give that output shape.
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  Window2d w = read_window(c, {wd[2], wd[3]}, {xd[2], xd[3]});
  std::vector<int64_t> op = c.attr_ints("output_padding");
  if (op.empty()) op = {0, 0};
  if (op.size() != 2) c.unsupported_attr("output_padding", dims_text(op) + " (two values)");
  for (int a = 0; a < 2; ++a)
    if (op[static_cast<size_t>(a)] < 0 || op[static_cast<size_t>(a)] >= std::max(w.stride[a], w.dilation[a]))
      c.unsupported_attr("output_padding", dims_text(op) + " (each below max(stride, dilation) of its axis)");
  std::vector<int64_t> out_shape = c.attr_ints("output_shape");
  if (out_shape.size() == 4) out_shape = {out_shape[2], out_shape[3]};  // [N, C, H, W] form
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (out_shape.empty() && same) out_shape = {xd[2] * w.stride[0], xd[3] * w.stride[1]};
  if (!out_shape.empty()) {
    if (out_shape.size() != 2) c.unsupported_attr("output_shape", dims_text(out_shape) + " ([H, W] or [N, C, H, W])");
    // ONNX: total_padding = stride (in - 1) + output_padding + dilation (k - 1) + 1 - output_shape, split
    // with the odd pixel at the start unless SAME_UPPER.
    for (int a = 0; a < 2; ++a) {
      const int64_t total = w.stride[a] * (xd[static_cast<size_t>(a) + 2] - 1) + op[static_cast<size_t>(a)] +
                            w.dilation[a] * (w.kernel[a] - 1) + 1 - out_shape[static_cast<size_t>(a)];
      if (total < 0)
        c.unsupported_attr("output_shape", dims_text(out_shape) +
                                               " (larger than the stride and kernel give without "
                                               "output_padding: set output_padding instead)");
      const int64_t half = total / 2;
      w.pads[a] = auto_pad == "SAME_UPPER" ? half : total - half;
      w.pads[a + 2] = total - w.pads[a];
    }
  }
  Conv2dOptions o = conv_options(w, groups);
  o.output_padding_h = static_cast<int>(op[0]);
  o.output_padding_w = static_cast<int>(op[1]);
  c.set_output(0, c.graph().conv_transpose2d(c.tensor(0), c.tensor(1), optional_bias(c), o, c.value_name()));
}

}  // namespace corun::onnx_import
