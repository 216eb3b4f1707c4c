// corun/window_options.hpp — the window attributes of the general convolution and pooling builders
// (Graph::conv2d, conv_transpose2d, max_pool, avg_pool). Field names follow ONNX: pads are
// (top, left, bottom, right) = ONNX pads [x1_begin, x2_begin, x1_end, x2_end].
#pragma once

namespace corun {

/// ONNX Conv / ConvTranspose attributes (strides, pads, dilations, group) for NCHW tensors.
struct Conv2dOptions {
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int dilation_h = 1, dilation_w = 1;
  int groups = 1;  ///< C_in and C_out divisible by it; groups == C_in is a depthwise convolution
  /// conv_transpose2d only: extra rows / columns at the bottom / right of the output (ONNX output_padding,
  /// PyTorch output_padding); each below max(stride, dilation) of its axis.
  int output_padding_h = 0, output_padding_w = 0;
};

/// ONNX MaxPool / AveragePool attributes (kernel_shape, strides, pads, ceil_mode, count_include_pad).
struct Pool2dOptions {
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;  ///< each below its axis's kernel
  /// Output size ceil((in + pads - kernel) / stride) + 1 instead of the floor, less one when that last
  /// window would start past the input and its leading padding (ONNX ceil_mode, PyTorch ceil_mode).
  bool ceil_mode = false;
  /// avg_pool only: divide by the window's positions inside the padded input rather than inside the
  /// input. Off by default, as in ONNX AveragePool (PyTorch's AvgPool2d defaults to on: set it).
  bool count_include_pad = false;
};

}  // namespace corun
