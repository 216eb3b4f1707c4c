// The exact-GELU pattern of PyTorch's exports (onnx/gelu_pattern.hpp).
#include "onnx/gelu_pattern.hpp"

#include "onnx/convert.hpp"
#include "onnx/node_index.hpp"

#include <cmath>
#include <map>
#include <optional>

namespace corun::onnx_import {

namespace {

// One-element float constants: value -> its value.
std::map<std::string, double> scalars_of(const NodeIndex& ix, const std::string& base_dir) {
  std::map<std::string, double> out;
  for (const auto& [name, t] : ix.constants) {
    if (t->data_location() == onnx::TensorProto::EXTERNAL) continue;
    int64_t n = 1;
    for (int64_t d : t->dims()) n *= d;
    if (n != 1 || (t->data_type() != onnx::TensorProto::FLOAT && t->data_type() != onnx::TensorProto::DOUBLE)) continue;
    out[name] = read_tensor(*t, base_dir).values.at(0);
  }
  return out;
}

bool near(std::optional<double> v, double want) { return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want); }

}  // namespace

std::vector<onnx::NodeProto> fuse_erf_gelu(const onnx::GraphProto& g, const std::string& base_dir) {
  std::vector<onnx::NodeProto> nodes(g.node().begin(), g.node().end());
  const NodeIndex ix = index_nodes(nodes, g);
  const std::map<std::string, double> scalars = scalars_of(ix, base_dir);
  auto scalar = [&](const std::string& v) -> std::optional<double> {
    const auto it = scalars.find(v);
    return it == scalars.end() ? std::nullopt : std::optional<double>(it->second);
  };
  // The one node reading `v` when it has the given op_type and `v` has no other reader, else -1.
  auto only_reader = [&](const std::string& v, const char* op) {
    if (ix.readers_of(v) != 1) return -1;
    const int r = static_cast<int>(ix.reader.at(v));
    return g.node(r).op_type() == op && g.node(r).input_size() == 2 - (std::string(op) == "Erf") ? r : -1;
  };
  // The operand of a binary node other than `v`.
  auto other = [&](int node, const std::string& v) {
    const auto& n = g.node(node);
    return n.input(0) == v ? n.input(1) : n.input(0);
  };
  std::vector<bool> removed(nodes.size(), false);
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& div = g.node(i);
    if (div.op_type() != "Div" || div.input_size() != 2 || div.output_size() != 1) continue;
    if (!near(scalar(div.input(1)), std::sqrt(2.0))) continue;
    const std::string& x = div.input(0);
    const int erf = only_reader(div.output(0), "Erf");
    if (erf < 0) continue;
    const int add = only_reader(g.node(erf).output(0), "Add");
    if (add < 0 || !near(scalar(other(add, g.node(erf).output(0))), 1.0)) continue;
    const int mul = only_reader(g.node(add).output(0), "Mul");
    if (mul < 0 || other(mul, g.node(add).output(0)) != x) continue;
    const int half = only_reader(g.node(mul).output(0), "Mul");
    if (half < 0 || !near(scalar(other(half, g.node(mul).output(0))), 0.5)) continue;
    for (int k : {i, erf, add, mul}) removed[static_cast<size_t>(k)] = true;
    onnx::NodeProto gelu;
    gelu.set_op_type("Gelu");
    gelu.set_name(g.node(half).name());
    gelu.add_input(x);
    gelu.add_output(g.node(half).output(0));
    nodes[static_cast<size_t>(half)] = gelu;
  }
  std::vector<onnx::NodeProto> out;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (!removed[k]) out.push_back(std::move(nodes[k]));
  return out;
}

}  // namespace corun::onnx_import
