// onnx/gelu_pattern.hpp — recognising the exact GELU that PyTorch exports before opset 20 (which has no
// Gelu op): y = (x * (1 + Erf(x / sqrt(2)))) * 0.5, five nodes, becomes one Gelu node (Graph::gelu).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace corun::onnx_import {

/// The graph's nodes in order, each Div -> Erf -> Add(1) -> Mul(x) -> Mul(0.5) chain whose intermediates
/// have no other reader replaced by one node of op_type "Gelu" (input x, the last Mul's output and name).
/// Anything else is returned unchanged (an Erf outside the pattern stays, and is an unsupported op).
std::vector<onnx::NodeProto> fuse_erf_gelu(const onnx::GraphProto& graph, const std::string& base_dir);

}  // namespace corun::onnx_import
