// graphs/ops/conv_window.hpp — what conv2d and conv_transpose2d share: the public options turned into
// attributes, and their checks.
#pragma once

#include "codelets/conv2d/conv2d.hpp"
#include "graphs/ops/window.hpp"

namespace corun::graphs {

inline codelets::ConvParams conv_params(const Conv2dOptions& o) {
  return codelets::ConvParams{o.stride_h,   o.stride_w,   o.pad_top,    o.pad_left, o.pad_bottom,
                              o.pad_right,  o.dilation_h, o.dilation_w, o.groups};
}

inline void check_conv_params(const ShapeQuery& q, const codelets::ConvParams& p) {
  if (p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 || p.dilation_w < 1 || p.groups < 1 ||
      p.pad_top < 0 || p.pad_left < 0 || p.pad_bottom < 0 || p.pad_right < 0)
    q.fail("need stride >= 1, dilation >= 1, groups >= 1 and pad >= 0 on each axis, got strides " + std::to_string(p.stride_h) +
           "x" + std::to_string(p.stride_w) + ", dilations " + std::to_string(p.dilation_h) + "x" +
           std::to_string(p.dilation_w) + ", groups " + std::to_string(p.groups) + ", pads (top, left, bottom, right) " +
           std::to_string(p.pad_top) + ", " + std::to_string(p.pad_left) + ", " + std::to_string(p.pad_bottom) + ", " +
           std::to_string(p.pad_right));
}

}  // namespace corun::graphs
