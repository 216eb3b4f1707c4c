// The zero Pad + AveragePool fold (onnx/pad_pool_pattern.hpp has the why).
#include "onnx/pad_pool_pattern.hpp"

#include "onnx/convert.hpp"
#include "onnx/node_index.hpp"

#include <map>
#include <optional>

namespace corun::onnx_import {

namespace {

int64_t int_attr(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a ? a->i() : fallback;
}

// The spatial pads {top, left, bottom, right} of a Pad node the fold can take, or nothing.
std::optional<std::vector<int64_t>> foldable_pad(const onnx::NodeProto& pad,
                                                 const std::map<std::string, const onnx::TensorProto*>& constants,
                                                 const std::string& base_dir) {
  if (pad.input_size() < 2 || pad.input_size() > 3 || pad.output_size() != 1) return std::nullopt;
  for (const auto& a : pad.attribute())
    if (a.name() != "mode" || a.s() != "constant") return std::nullopt;
  auto constant = [&](const std::string& name) -> std::optional<Constant> {
    const auto it = constants.find(name);
    if (it == constants.end() || it->second->data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
    return read_tensor(*it->second, base_dir);
  };
  if (pad.input_size() == 3 && !pad.input(2).empty()) {
    const std::optional<Constant> value = constant(pad.input(2));
    if (!value || value->numel() != 1 || value->values[0] != 0.0) return std::nullopt;
  }
  const std::optional<Constant> pads = constant(pad.input(1));
  if (!pads || pads->numel() != 8) return std::nullopt;  // a rank-4 input: N, C, H, W begins, then ends
  const std::vector<int64_t> p = pads->ints();
  if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) return std::nullopt;
  for (int a : {2, 3, 6, 7})
    if (p[static_cast<size_t>(a)] < 0) return std::nullopt;
  return std::vector<int64_t>{p[2], p[3], p[6], p[7]};
}

// Whether AveragePool `pool` can take the pads {top, left, bottom, right}.
bool takes_pads(const onnx::NodeProto& pool, const std::vector<int64_t>& pads) {
  if (pool.input_size() != 1 || pool.output_size() != 1) return false;
  const onnx::AttributeProto* own = find_attr(pool, "pads");
  if (own)
    for (int64_t p : own->ints())
      if (p != 0) return false;
  const onnx::AttributeProto* autopad = find_attr(pool, "auto_pad");
  if (autopad && autopad->s() != "NOTSET") return false;
  if (int_attr(pool, "ceil_mode", 0) != 0) return false;  // ceil mode's last window depends on where pads are
  if (const onnx::AttributeProto* d = find_attr(pool, "dilations"))
    for (int64_t v : d->ints())
      if (v != 1) return false;
  const onnx::AttributeProto* kernel = find_attr(pool, "kernel_shape");
  if (!kernel || kernel->ints_size() != 2) return false;
  for (int a = 0; a < 4; ++a)
    if (pads[static_cast<size_t>(a)] >= kernel->ints(a % 2)) return false;
  return true;
}

}  // namespace

std::vector<onnx::NodeProto> fold_pad_into_average_pool(std::vector<onnx::NodeProto> nodes,
                                                        const onnx::GraphProto& graph, const std::string& base_dir) {
  const NodeIndex ix = index_nodes(nodes, graph);
  std::vector<bool> removed(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& pad = nodes[i];
    if (pad.op_type() != "Pad" || !pad.domain().empty()) continue;
    const std::optional<std::vector<int64_t>> pads = foldable_pad(pad, ix.constants, base_dir);
    if (!pads || ix.readers_of(pad.output(0)) != 1) continue;
    onnx::NodeProto& pool = nodes[ix.reader.at(pad.output(0))];
    if (pool.op_type() != "AveragePool" || !pool.domain().empty() || !takes_pads(pool, *pads)) continue;
    pool.set_input(0, pad.input(0));
    for (int a = pool.attribute_size() - 1; a >= 0; --a)
      if (pool.attribute(a).name() == "pads" || pool.attribute(a).name() == "count_include_pad")
        pool.mutable_attribute()->DeleteSubrange(a, 1);
    onnx::AttributeProto* p = pool.add_attribute();
    p->set_name("pads");
    p->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : *pads) p->add_ints(v);
    onnx::AttributeProto* include = pool.add_attribute();
    include->set_name("count_include_pad");
    include->set_type(onnx::AttributeProto::INT);
    include->set_i(1);
    removed[i] = true;
  }
  std::vector<onnx::NodeProto> out;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (!removed[k]) out.push_back(std::move(nodes[k]));
  return out;
}

}  // namespace corun::onnx_import
