// onnx/ops/window.hpp — a 2-D window's attributes (kernel_shape, strides, dilations, pads, auto_pad), read
// once for the converters of conv.cpp and pool.cpp (window.cpp).
#pragma once

#include "onnx/convert.hpp"

#include <corun/window_options.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace corun::onnx_import {

/// A 2-D window's attributes, per axis ([0] = H, [1] = W); pads are (top, left, bottom, right) with any
/// auto_pad already resolved (window.cpp).
struct Window2d {
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, dilation{1, 1};
  std::array<int64_t, 4> pads{0, 0, 0, 0};
};
/// Reads kernel_shape (or `weight_kernel`, the weights' [R, S], when absent; empty for pools), strides,
/// dilations, pads and auto_pad; `input_hw` sizes the SAME_* pads.
Window2d read_window(Converter& c, const std::vector<int64_t>& weight_kernel, const std::vector<int64_t>& input_hw);
Conv2dOptions conv_options(const Window2d& w, int64_t groups);

}  // namespace corun::onnx_import
