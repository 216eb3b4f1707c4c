// MaxPool and AveragePool: the Graph's general max_pool / avg_pool (per-axis kernel and strides,
// asymmetric pads, ceil_mode, count_include_pad). max_pool's padding never wins, as ONNX's -inf padding.
#include "onnx/ops/pool.hpp"
#include "onnx/ops/window.hpp"

#include <string>

namespace corun::onnx_import {

namespace {
Pool2dOptions pool_options(Converter& c) {
  const std::vector<int64_t> xd = c.input_dims(0);
  if (xd.size() != 4) c.unsupported("input of shape " + dims_text(xd) + " (2-D pooling of NCHW tensors only)");
  if (!c.has_attr("kernel_shape")) c.unsupported("no kernel_shape (required)");
  const Window2d w = read_window(c, {}, {xd[2], xd[3]});
  if (w.dilation[0] != 1 || w.dilation[1] != 1)
    c.unsupported_attr("dilations",
                       dims_text({w.dilation[0], w.dilation[1]}) + " (1 only: dilated pooling is not supported)");
  for (int a = 0; a < 4; ++a)
    if (w.pads[a] >= w.kernel[a % 2])
      c.unsupported_attr("pads", dims_text({w.pads[0], w.pads[1], w.pads[2], w.pads[3]}) +
                                     " (each below its axis's kernel size: a window of padding only)");
  const int64_t ceil_mode = c.attr_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) c.unsupported_attr("ceil_mode", std::to_string(ceil_mode) + " (0 or 1)");
  Pool2dOptions o;
  o.kernel_h = static_cast<int>(w.kernel[0]);
  o.kernel_w = static_cast<int>(w.kernel[1]);
  o.stride_h = static_cast<int>(w.stride[0]);
  o.stride_w = static_cast<int>(w.stride[1]);
  o.pad_top = static_cast<int>(w.pads[0]);
  o.pad_left = static_cast<int>(w.pads[1]);
  o.pad_bottom = static_cast<int>(w.pads[2]);
  o.pad_right = static_cast<int>(w.pads[3]);
  o.ceil_mode = ceil_mode == 1;
  return o;
}
}  // namespace

void convert_max_pool(Converter& c) {
  c.only_attrs({"kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode", "storage_order"});
  if (c.attr_int("storage_order", 0) != 0) c.unsupported_attr("storage_order", "1 (0 only)");
  if (c.node().output_size() > 1 && !c.node().output(1).empty()) c.unsupported("the Indices output is not supported");
  c.set_output(0, c.graph().max_pool(c.tensor(0), pool_options(c), c.value_name()));
}

void convert_average_pool(Converter& c) {
  c.only_attrs({"kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode", "count_include_pad"});
  Pool2dOptions o = pool_options(c);
  o.count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  c.set_output(0, c.graph().avg_pool(c.tensor(0), o, c.value_name()));
}

}  // namespace corun::onnx_import
