// MaxPool and AveragePool: the Graph's max_pool / avg_pool (square windows, floor sizes; max_pool's padding
// never wins, as ONNX's -inf padding; avg_pool divides by the positions inside the image, ONNX's
// count_include_pad = 0).
#include "onnx/ops/ops.hpp"

namespace corun::onnx_import {

namespace {
void check_pool_input(Converter& c) {
  const std::vector<int64_t> xd = c.input_dims(0);
  if (xd.size() != 4) c.unsupported("input of shape " + dims_text(xd) + " (2-D pooling of NCHW tensors only)");
  if (c.attr_int("ceil_mode", 0) != 0) c.unsupported_attr("ceil_mode", std::to_string(c.attr_int("ceil_mode", 0)) + " (0 only)");
}
}  // namespace

void convert_max_pool(Converter& c) {
  c.only_attrs({"kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode", "storage_order"});
  check_pool_input(c);
  if (c.attr_int("storage_order", 0) != 0) c.unsupported_attr("storage_order", "1 (0 only)");
  if (c.node().output_size() > 1 && !c.node().output(1).empty()) c.unsupported("the Indices output is not supported");
  const SquareWindow w = square_window(c, -1, -1);
  if (w.pad * 2 >= w.kernel && w.pad > 0) c.unsupported_attr("pads", std::to_string(w.pad) + " (less than half the kernel)");
  c.set_output(0, c.graph().max_pool(c.tensor(0), w.kernel, w.stride, w.pad, c.value_name()));
}

void convert_average_pool(Converter& c) {
  c.only_attrs({"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "count_include_pad"});
  check_pool_input(c);
  const SquareWindow w = square_window(c, -1, -1);
  if (c.attr_int("count_include_pad", 0) != 0 && w.pad > 0)
    c.unsupported_attr("count_include_pad", "1 with pads (0 only: the average over the positions inside the image)");
  c.set_output(0, c.graph().avg_pool(c.tensor(0), w.kernel, w.stride, w.pad, c.value_name()));
}

}  // namespace corun::onnx_import
