// Constants and the shape arithmetic folded at import: Constant, ConstantOfShape, Shape, Gather, Unsqueeze, Cast. PyTorch
// exports x.view(x.size(0), -1) as Shape -> Gather -> Unsqueeze -> Concat -> Reshape: every link is known
// once the input shapes are, so the chain becomes one constant shape and the Reshape a Graph::reshape. A
// Gather of a graph value (or with computed indices) is the Graph's gather instead.
#include "onnx/ops/constant.hpp"

#include <algorithm>
#include <cmath>

namespace corun::onnx_import {

void convert_constant(Converter& c) {
  c.only_attrs({"value", "value_float", "value_floats", "value_int", "value_ints"});
  Constant k;
  if (const onnx::TensorProto* t = c.attr_tensor("value")) {
    k = read_tensor(*t, "");
  } else if (c.has_attr("value_float")) {
    k.values = {c.attr_float("value_float", 0.0f)};
  } else if (c.has_attr("value_int")) {
    k.integer = true;
    k.values = {static_cast<double>(c.attr_int("value_int", 0))};
  } else if (c.has_attr("value_ints")) {
    k.integer = true;
    for (int64_t v : c.attr_ints("value_ints")) k.values.push_back(static_cast<double>(v));
    k.dims = {static_cast<int64_t>(k.values.size())};
  } else if (c.has_attr("value_floats")) {
    for (const auto& a : c.node().attribute())
      if (a.name() == "value_floats")
        for (float v : a.floats()) k.values.push_back(v);
    k.dims = {static_cast<int64_t>(k.values.size())};
  } else {
    c.unsupported("no value attribute (sparse_value and strings are not supported)");
  }
  c.set_output(0, std::move(k));
}

void convert_shape(Converter& c) {
  c.only_attrs({"start", "end"});
  const std::vector<int64_t> d = c.input_dims(0);
  const auto r = static_cast<int64_t>(d.size());
  auto clamp = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  const int64_t start = clamp(c.attr_int("start", 0)), end = clamp(c.attr_int("end", r));
  Constant k;
  k.integer = true;
  for (int64_t i = start; i < end; ++i) k.values.push_back(static_cast<double>(d[static_cast<size_t>(i)]));
  k.dims = {static_cast<int64_t>(k.values.size())};
  c.set_output(0, std::move(k));
}

namespace {
// Gather of a graph value (or a parameter table: an embedding lookup), or with indices computed at run
// time: the Graph's gather. A 0-D index drops the axis (scalar_index); a constant one becomes a [1].
void gather_tensor(Converter& c) {
  const std::vector<int64_t> xd = c.input_dims(0);
  // A constant's own dims: a scalar index shared by several Gathers is a [1] tensor after the first one.
  const std::vector<int64_t> id = c.constant(1) ? c.constant(1)->dims : c.input_dims(1);
  const int rank = static_cast<int>(xd.size());
  if (rank == 0) c.unsupported("scalar data");
  const int axis = normalize_axis(c, c.attr_int("axis", 0), rank, "axis");
  const bool scalar_index = id.empty();
  const size_t out_rank = xd.size() - 1 + id.size();
  if (out_rank < 1 || out_rank > static_cast<size_t>(kMaxDims))
    c.unsupported("data " + dims_text(xd) + " and indices " + dims_text(id) + " give a result of rank " +
                  std::to_string(out_rank) + " (corun tensors have 1 to 4 dimensions)");
  if (const Constant* k = c.constant(1))
    for (size_t j = 0; j < k->values.size(); ++j) {
      const int64_t at = k->as_int(j), extent = xd[static_cast<size_t>(axis)];
      if (at < -extent || at >= extent)
        c.unsupported("index " + std::to_string(at) + " out of range for extent " + std::to_string(extent));
    }
  c.set_output(0, c.graph().gather(c.tensor(0), c.operand(1), axis, scalar_index, c.value_name()));
}
}  // namespace

void convert_gather(Converter& c) {
  c.only_attrs({"axis"});
  if (!c.foldable(0) || !c.foldable(1)) {
    gather_tensor(c);
    return;
  }
  const Constant& data = *c.constant(0);
  const Constant& idx = c.require_constant(1, "indices");
  const int rank = static_cast<int>(data.dims.size());
  if (rank == 0) c.unsupported("scalar data");
  const int axis = normalize_axis(c, c.attr_int("axis", 0), rank, "axis");
  const int64_t extent = data.dims[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= data.dims[static_cast<size_t>(i)];
  for (int i = axis + 1; i < rank; ++i) inner *= data.dims[static_cast<size_t>(i)];
  Constant out;
  out.integer = data.integer;
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), idx.dims.begin(), idx.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < idx.values.size(); ++j) {
      int64_t at = idx.as_int(j);
      if (at < 0) at += extent;
      if (at < 0 || at >= extent) c.unsupported("index " + std::to_string(idx.as_int(j)) + " out of range for extent " + std::to_string(extent));
      for (int64_t e = 0; e < inner; ++e)
        out.values.push_back(data.values[static_cast<size_t>((o * extent + at) * inner + e)]);
    }
  c.set_output(0, std::move(out));
}

void convert_unsqueeze(Converter& c) {
  c.only_attrs({"axes"});
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (c.has_input(1)) axes = c.require_constant(1, "axes").ints();
  if (axes.empty()) c.unsupported("no axes");
  const std::vector<int64_t> d = c.input_dims(0);
  const int out_rank = static_cast<int>(d.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    const int n = normalize_axis(c, a, out_rank, "axis");
    if (inserted[static_cast<size_t>(n)]) c.unsupported("axis " + std::to_string(a) + " given twice");
    inserted[static_cast<size_t>(n)] = true;
  }
  std::vector<int64_t> to;
  size_t next = 0;
  for (int i = 0; i < out_rank; ++i) to.push_back(inserted[static_cast<size_t>(i)] ? 1 : d[next++]);
  if (c.foldable(0)) {
    Constant out = *c.constant(0);
    out.dims = to;
    c.set_output(0, std::move(out));
    return;
  }
  if (to.size() > static_cast<size_t>(kMaxDims)) c.unsupported("a result of rank " + std::to_string(to.size()) + " (at most 4)");
  c.set_output(0, c.graph().reshape(c.tensor(0), Shape::of(to.data(), static_cast<int>(to.size())), c.value_name()));
}

// ConstantOfShape: folded at import (PyTorch computes a padding module's pads with it); the shape input
// must be a constant, the value a one-element tensor (0.0f when absent).
void convert_constant_of_shape(Converter& c) {
  c.only_attrs({"value"});
  const std::vector<int64_t> shape = c.require_constant(0, "input").ints();
  Constant k;
  double value = 0.0;
  if (const onnx::TensorProto* t = c.attr_tensor("value")) {
    const Constant v = read_tensor(*t, "");
    if (v.numel() != 1) c.unsupported_attr("value", "a tensor of " + std::to_string(v.numel()) + " elements (one)");
    value = v.values[0];
    k.integer = v.integer;
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > (int64_t{1} << 20)) c.unsupported("a constant of shape " + dims_text(shape) + " (folded at import: small shapes only)");
    n *= d;
  }
  if (n > (int64_t{1} << 20)) c.unsupported("a constant of shape " + dims_text(shape) + " (folded at import: small shapes only)");
  k.dims = shape;
  k.values.assign(static_cast<size_t>(n), value);
  c.set_output(0, std::move(k));
}

void convert_cast(Converter& c) {
  c.only_attrs({"to"});
  using TP = onnx::TensorProto;
  const auto to = static_cast<int>(c.attr_int("to", TP::FLOAT));
  const bool to_int = to == TP::INT64 || to == TP::INT32 || to == TP::INT8 || to == TP::UINT8 || to == TP::BOOL;
  const bool to_float = to == TP::FLOAT || to == TP::DOUBLE;
  if (c.foldable(0) && (to_int || to_float)) {
    Constant out = *c.constant(0);
    out.integer = to_int;
    for (double& v : out.values) v = to == TP::BOOL ? (v != 0.0) : to_int ? std::trunc(v) : v;
    c.set_output(0, std::move(out));
    return;
  }
  if (to != TP::FLOAT)
    c.unsupported_attr("to", TP::DataType_Name(static_cast<TP::DataType>(to)) + " on a tensor (FLOAT only: corun tensors are f32)");
  c.alias_output(0, 0);
}

}  // namespace corun::onnx_import

namespace corun::onnx_import {

// Expand: numpy broadcasting of the input to the shape input (bidirectional: a 1 in the shape keeps the
// input's extent). PyTorch's nn.GRU/nn.LSTM export their zero initial state as Expand(Constant 0, the
// folded shape [directions, batch, hidden]), which folds; a graph value becomes an add of zeros of the
// result's shape (its gradient sums back over the broadcast axes).
void convert_expand(Converter& c) {
  c.only_attrs({});
  const std::vector<int64_t> in = c.input_dims(0), shape = c.require_constant(1, "shape").ints();
  const size_t rank = std::max(in.size(), shape.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
    const int64_t b = i + shape.size() >= rank ? shape[i + shape.size() - rank] : 1;
    if (a != b && a != 1 && b != 1)
      c.unsupported("input " + dims_text(in) + " does not broadcast to the shape " + dims_text(shape));
    out[i] = a == 1 ? b : a;
  }
  if (c.foldable(0)) {
    const Constant& k = *c.constant(0);
    Constant r;
    r.integer = k.integer;
    r.dims = out;
    int64_t n = 1;
    for (int64_t d : out) n *= d;
    r.values.resize(static_cast<size_t>(n));
    for (int64_t e = 0; e < n; ++e) {  // the input's element under result element e (strides of the input)
      int64_t rest = e, at = 0, stride = 1;
      for (size_t i = rank; i-- > 0;) {
        const int64_t coord = rest % out[i];
        rest /= out[i];
        const int64_t extent = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
        if (extent > 1) at += coord * stride;
        stride *= extent;
      }
      r.values[static_cast<size_t>(e)] = k.values[static_cast<size_t>(at)];
    }
    c.set_output(0, std::move(r));
    return;
  }
  if (out == in) {
    c.alias_output(0, 0);
    return;
  }
  if (rank > static_cast<size_t>(kMaxDims)) c.unsupported("a result of rank " + std::to_string(rank) + " (at most 4)");
  const Tensor zeros = c.filled(Shape::of(out.data(), static_cast<int>(rank)), 0.0f, "zeros");
  c.set_output(0, c.graph().add(c.operand(0), zeros, c.value_name()));
}

}  // namespace corun::onnx_import
