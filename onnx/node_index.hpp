// onnx/node_index.hpp — what the ONNX pattern rewrites (gelu_pattern, pad_pool_pattern) look up about the
// nodes before rewriting them: who reads each value, and which values are constants.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace corun::onnx_import {

struct NodeIndex {
  std::map<std::string, int> readers;     ///< value -> node inputs reading it, + 2 for a graph output (so an
                                          ///< output never counts as an intermediate with one reader)
  std::map<std::string, size_t> reader;   ///< value -> the (last) node of `nodes` reading it
  std::map<std::string, const onnx::TensorProto*> constants;  ///< initializers and Constant nodes' values
  /// How many read `value` (0 for none).
  int readers_of(const std::string& value) const {
    const auto it = readers.find(value);
    return it == readers.end() ? 0 : it->second;
  }
};

/// The index of `nodes` (the graph's, or a rewrite of them) in `graph` (its outputs, initializers and
/// Constant nodes; the pointers are into `graph`).
NodeIndex index_nodes(const std::vector<onnx::NodeProto>& nodes, const onnx::GraphProto& graph);

}  // namespace corun::onnx_import
