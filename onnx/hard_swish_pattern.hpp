// onnx/hard_swish_pattern.hpp — PyTorch exports nn.Hardswish before opset 14 (which has no HardSwish op) as
// x * HardSigmoid(x; alpha = 1/6, beta = 1/2): two nodes, MobileNetV3's activation after most convolutions.
// Converted as they stand, that is a hard_sigmoid node and a multiply, two tasks and two passes over the
// activations, and x * clamp(x / 6 + 1/2) rounds differently from PyTorch's own x * relu6(x + 3) / 6. One
// HardSwish node (Graph::hard_swish) is one chainable op computing PyTorch's formula.
#pragma once

#include <onnx/onnx_pb.h>

#include <vector>

namespace corun::onnx_import {

/// `nodes` (the graph's, in order) with each HardSigmoid(x) -> Mul(x, .) pair made one HardSwish node (input x,
/// the Mul's output and name) when the HardSigmoid has alpha 1/6 and beta 1/2 (within float rounding) and its
/// output has no other reader (nor is a graph output). Anything else is returned unchanged.
std::vector<onnx::NodeProto> fuse_hard_swish(std::vector<onnx::NodeProto> nodes, const onnx::GraphProto& graph);

}  // namespace corun::onnx_import
