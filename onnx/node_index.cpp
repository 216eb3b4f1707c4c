// onnx/node_index.hpp has the why.
#include "onnx/node_index.hpp"

namespace corun::onnx_import {

NodeIndex index_nodes(const std::vector<onnx::NodeProto>& nodes, const onnx::GraphProto& graph) {
  NodeIndex ix;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& in : nodes[i].input()) {
      ++ix.readers[in];
      ix.reader[in] = i;
    }
  for (const auto& o : graph.output()) ix.readers[o.name()] += 2;
  for (const auto& t : graph.initializer()) ix.constants[t.name()] = &t;
  for (const auto& n : graph.node())
    if (n.op_type() == "Constant" && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) ix.constants[n.output(0)] = &a.t();
  return ix;
}

}  // namespace corun::onnx_import
