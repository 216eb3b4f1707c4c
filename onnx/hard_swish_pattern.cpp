// The HardSigmoid * x -> HardSwish rewrite (onnx/hard_swish_pattern.hpp has the why).
#include "onnx/hard_swish_pattern.hpp"

#include "onnx/convert.hpp"
#include "onnx/node_index.hpp"

#include <cmath>

namespace corun::onnx_import {

namespace {

// Whether `n` is HardSigmoid with PyTorch's alpha = 1/6 and beta = 1/2 (the file holds them as floats).
bool torch_hard_sigmoid(const onnx::NodeProto& n) {
  if (n.op_type() != "HardSigmoid" || n.input_size() != 1 || n.output_size() != 1) return false;
  const onnx::AttributeProto* alpha = find_attr(n, "alpha");
  const onnx::AttributeProto* beta = find_attr(n, "beta");
  for (const auto& a : n.attribute())
    if (a.name() != "alpha" && a.name() != "beta") return false;
  const double av = alpha ? alpha->f() : 0.2, bv = beta ? beta->f() : 0.5;
  return std::fabs(av - 1.0 / 6.0) <= 1e-7 && bv == 0.5;
}

}  // namespace

std::vector<onnx::NodeProto> fuse_hard_swish(std::vector<onnx::NodeProto> nodes, const onnx::GraphProto& g) {
  const NodeIndex ix = index_nodes(nodes, g);
  std::vector<bool> removed(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& hs = nodes[i];
    if (!torch_hard_sigmoid(hs) || ix.readers_of(hs.output(0)) != 1) continue;
    const size_t m = ix.reader.at(hs.output(0));
    const onnx::NodeProto& mul = nodes[m];
    if (mul.op_type() != "Mul" || mul.input_size() != 2 || mul.output_size() != 1) continue;
    const std::string& x = hs.input(0);
    const bool x_first = mul.input(0) == x && mul.input(1) == hs.output(0);
    const bool x_second = mul.input(1) == x && mul.input(0) == hs.output(0);
    if (!x_first && !x_second) continue;
    onnx::NodeProto swish;
    swish.set_op_type("HardSwish");
    swish.set_name(mul.name());
    swish.add_input(x);
    swish.add_output(mul.output(0));
    removed[i] = true;
    nodes[m] = swish;
  }
  std::vector<onnx::NodeProto> out;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (!removed[k]) out.push_back(std::move(nodes[k]));
  return out;
}

}  // namespace corun::onnx_import
