// onnx/pad_pool_pattern.hpp — PyTorch exports AvgPool2d(padding=p) with count_include_pad (its default, and
// Inception-v3's branch pools) as a zero Pad followed by an unpadded AveragePool. Converted as they stand, the
// Pad is two concatenations along H and W of zero bands, which no layout but NCHW takes: each inception block's
// output then went to NCHW and back into the next block's convolutions (Graph::block_layouts), forward and
// backward. Folded, they are one AveragePool with those pads and count_include_pad = 1, which computes the same
// bits: the padded taps only added +0 to a sum that started at +0, and the divisor (the window's positions
// inside the padded image) is the same.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace corun::onnx_import {

/// `nodes` (the graph's, in order) with each Pad -> AveragePool pair folded into the AveragePool when
///   - the Pad is mode constant with value 0 (absent, or a constant zero), constant pads on H and W only, none
///     negative, no axes input, and its output has no other reader (nor is a graph output);
///   - the AveragePool has no pads of its own, no auto_pad, dilations 1, floor output size, a 2-D kernel larger
///     than each pad.
/// Anything else is returned unchanged (and converted as it is).
std::vector<onnx::NodeProto> fold_pad_into_average_pool(std::vector<onnx::NodeProto> nodes,
                                                        const onnx::GraphProto& graph, const std::string& base_dir);

}  // namespace corun::onnx_import
