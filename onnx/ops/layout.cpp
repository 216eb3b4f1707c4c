// Layout ops: Concat, Split, Slice, Reshape, Flatten, Identity. On import-time constants (shape arithmetic)
// Concat, Slice, Reshape and Flatten fold; on graph values they map to the Graph's concat, split, slice
// and reshape.
#include "onnx/ops/ops.hpp"

#include <algorithm>
#include <numeric>

namespace corun::onnx_import {

namespace {

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

Shape shape_of(Converter& c, const std::vector<int64_t>& d) {
  if (d.empty() || d.size() > static_cast<size_t>(kMaxDims))
    c.unsupported("a result of rank " + std::to_string(d.size()) + " (corun tensors have 1 to 4 dimensions)");
  for (int64_t x : d)
    if (x <= 0) c.unsupported("a result of shape " + dims_text(d) + " (every extent must be positive)");
  return Shape::of(d.data(), static_cast<int>(d.size()));
}

// Output k of the node as a reshaped copy of its input (a folded constant keeps its values).
void reshaped_output(Converter& c, const std::vector<int64_t>& to) {
  if (c.foldable(0)) {
    const Constant* k = c.constant(0);
    Constant out = *k;
    out.dims = to;
    c.set_output(0, std::move(out));
    return;
  }
  c.set_output(0, c.graph().reshape(c.tensor(0), shape_of(c, to), c.value_name()));
}

}  // namespace

void convert_concat(Converter& c) {
  c.only_attrs({"axis"});
  const int n = c.num_inputs();
  const std::vector<int64_t> d0 = c.input_dims(0);
  const int axis = normalize_axis(c, c.attr_int("axis", 0), static_cast<int>(std::max<size_t>(d0.size(), 1)), "axis");
  bool all_constant = true;
  for (int i = 0; i < n; ++i) all_constant = all_constant && c.foldable(i);
  if (all_constant) {
    Constant out;
    out.dims = d0;
    out.dims[static_cast<size_t>(axis)] = 0;
    out.integer = c.constant(0)->integer;
    const int64_t outer = product(d0, 0, static_cast<size_t>(axis));
    for (int i = 0; i < n; ++i) {
      const std::vector<int64_t> di = c.input_dims(i);
      if (di.size() != d0.size()) c.unsupported("inputs of ranks " + std::to_string(d0.size()) + " and " + std::to_string(di.size()));
      out.dims[static_cast<size_t>(axis)] += di[static_cast<size_t>(axis)];
    }
    out.values.resize(static_cast<size_t>(out.numel()));
    int64_t col = 0;
    const int64_t out_row = product(out.dims, static_cast<size_t>(axis), out.dims.size());
    for (int i = 0; i < n; ++i) {
      const Constant& k = *c.constant(i);
      const int64_t row = outer ? k.numel() / outer : 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t e = 0; e < row; ++e)
          out.values[static_cast<size_t>(o * out_row + col + e)] = k.values[static_cast<size_t>(o * row + e)];
      col += row;
    }
    c.set_output(0, std::move(out));
    return;
  }
  std::vector<Tensor> xs;
  for (int i = 0; i < n; ++i) xs.push_back(c.tensor(i));
  c.set_output(0, c.graph().concat(xs, axis, c.value_name()));
}

void convert_split(Converter& c) {
  c.only_attrs({"axis", "split"});
  const std::vector<int64_t> d = c.input_dims(0);
  const int axis = normalize_axis(c, c.attr_int("axis", 0), static_cast<int>(d.size()), "axis");
  std::vector<int64_t> sizes = c.attr_ints("split");
  if (c.has_input(1)) sizes = c.require_constant(1, "split sizes").ints();
  const int parts = c.node().output_size();
  if (sizes.empty()) {
    if (d[static_cast<size_t>(axis)] % parts != 0)
      c.unsupported("extent " + std::to_string(d[static_cast<size_t>(axis)]) + " in " + std::to_string(parts) +
                    " equal parts");
    sizes.assign(static_cast<size_t>(parts), d[static_cast<size_t>(axis)] / parts);
  }
  if (static_cast<int>(sizes.size()) != parts)
    c.unsupported(std::to_string(sizes.size()) + " split sizes for " + std::to_string(parts) + " outputs");
  const std::vector<Tensor> outs = c.graph().split(c.tensor(0), axis, sizes, c.value_name());
  for (int k = 0; k < parts; ++k) c.set_output(k, outs[static_cast<size_t>(k)]);
}

void convert_slice(Converter& c) {
  c.only_attrs({});
  const std::vector<int64_t> d = c.input_dims(0);
  const std::vector<int64_t> starts = c.require_constant(1, "starts").ints();
  const std::vector<int64_t> ends = c.require_constant(2, "ends").ints();
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (c.has_input(3)) axes = c.require_constant(3, "axes").ints();
  int64_t step = 1;
  if (c.has_input(4))
    for (int64_t s : c.require_constant(4, "steps").ints()) step = s;
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1)
    c.unsupported(std::to_string(starts.size()) + " sliced axes (one axis only)");
  const int axis = normalize_axis(c, axes[0], static_cast<int>(std::max<size_t>(d.size(), 1)), "axis");
  const int64_t dim = d.empty() ? 1 : d[static_cast<size_t>(axis)];
  if (step != 1) {
    // Another step folds on a constant only (PyTorch reverses a padding module's [n, 2] pads with step -1).
    if (step == 0 || !c.foldable(0) || d.empty())
      c.unsupported("step " + std::to_string(step) + " (step 1; another step on a constant only)");
    const Constant* k = c.constant(0);
    // ONNX: a negative step clamps start to [0, dim - 1] and end to [-1, dim - 1].
    const int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
    auto clamp_step = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + dim : v, lo, hi); };
    const int64_t start = step > 0 ? clamp_step(starts[0]) : std::clamp<int64_t>(starts[0] < 0 ? starts[0] + dim : starts[0], 0, dim - 1);
    const int64_t end = clamp_step(ends[0]);
    std::vector<int64_t> picked;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step) picked.push_back(i);
    if (picked.empty()) c.unsupported("an empty slice");
    const auto a = static_cast<size_t>(axis);
    const int64_t outer = product(d, 0, a), inner = product(d, a + 1, d.size());
    Constant out;
    out.integer = k->integer;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i : picked)
        for (int64_t j = 0; j < inner; ++j)
          out.values.push_back(k->values[static_cast<size_t>((o * dim + i) * inner + j)]);
    out.dims = d;
    out.dims[a] = static_cast<int64_t>(picked.size());
    c.set_output(0, std::move(out));
    return;
  }
  auto clamp = [dim](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim); };
  const int64_t start = clamp(starts[0]), end = clamp(ends[0]);
  if (end <= start) c.unsupported("an empty slice [" + std::to_string(start) + ", " + std::to_string(end) + ")");
  if (c.foldable(0)) {
    const Constant* k = c.constant(0);
    if (d.size() != 1) c.unsupported("folding a slice of a constant of rank " + std::to_string(d.size()) + " (1-D only)");
    Constant out;
    out.integer = k->integer;
    out.values.assign(k->values.begin() + start, k->values.begin() + end);
    out.dims = {end - start};
    c.set_output(0, std::move(out));
    return;
  }
  c.set_output(0, c.graph().slice(c.tensor(0), axis, start, end - start, c.value_name()));
}

// The bands of Pad's reflect and edge modes along one axis, as one-wide slices of x (no new op: the
// gradient of a mirrored or repeated row reaches the input through slice and concat, summed by autodiff).
// reflect mirrors without repeating the border (x[p], ..., x[1] | x | x[n-2], ..., x[n-1-q]), so each pad
// must be below the extent; edge repeats the border row (x[0] p times | x | x[n-1] q times).
Tensor mirror_pad(Converter& c, Tensor x, int axis, int64_t begin, int64_t end, bool reflect,
                  const std::string& tag) {
  const int64_t n = x.shape()[axis];
  if (begin < 0 || end < 0)
    c.unsupported("negative pads (" + std::to_string(begin) + ", " + std::to_string(end) + ") with mode " +
                  (reflect ? "reflect" : "edge") + " (a crop is supported in constant mode only)");
  if (reflect && (begin >= n || end >= n))
    c.unsupported("reflect pads " + std::to_string(begin) + ", " + std::to_string(end) + " on axis " +
                  std::to_string(axis) + " of extent " + std::to_string(n) +
                  " (each reflect pad must be below the extent)");
  std::vector<Tensor> parts;
  const std::string base = c.value_name() + "." + tag;
  for (int64_t i = 0; i < begin; ++i) {
    const int64_t row = reflect ? begin - i : 0;
    parts.push_back(c.graph().slice(x, axis, row, 1, base + "_begin" + std::to_string(i)));
  }
  parts.push_back(x);
  for (int64_t i = 0; i < end; ++i) {
    const int64_t row = reflect ? n - 2 - i : n - 1;
    parts.push_back(c.graph().slice(x, axis, row, 1, base + "_end" + std::to_string(i)));
  }
  return c.graph().concat(parts, axis, base);
}

// ONNX Pad (opset 11+). Constant mode: a band of constant_value (0 when absent) concatenated on each side
// of every padded axis, and a slice for a negative pad (a crop). Reflect and edge modes: mirror_pad.
// Gradients reach the input through concat and slice. PyTorch exports a padded AvgPool2d with
// count_include_pad as Pad + AveragePool (Inception-v3), nn.ReflectionPad2d as mode reflect and
// nn.ReplicationPad2d as mode edge.
void convert_pad(Converter& c) {
  c.only_attrs({"mode"});
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    c.unsupported_attr("mode", "'" + mode + "' (constant, reflect or edge)");
  const std::vector<int64_t> d = c.input_dims(0);
  const int rank = static_cast<int>(d.size());
  const std::vector<int64_t> pads = c.require_constant(1, "pads").ints();
  std::vector<int> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (c.has_input(3)) {
    axes.clear();
    for (int64_t a : c.require_constant(3, "axes").ints()) axes.push_back(normalize_axis(c, a, rank, "axes"));
  }
  if (pads.size() != 2 * axes.size())
    c.unsupported(std::to_string(pads.size()) + " pads for " + std::to_string(axes.size()) +
                  " axes (two per axis: every begin, then every end)");
  float value = 0.0f;
  if (c.has_input(2)) {
    const Constant& v = c.require_constant(2, "constant_value");
    if (v.numel() != 1) c.unsupported("a constant_value of " + std::to_string(v.numel()) + " elements (a scalar)");
    value = static_cast<float>(v.values[0]);
  }
  Tensor x = c.tensor(0);
  bool changed = false;
  const size_t k = axes.size();
  for (size_t a = 0; a < k; ++a) {
    const int axis = axes[a];
    const int64_t begin = pads[a], end = pads[a + k];
    if (begin == 0 && end == 0) continue;
    changed = true;
    const std::string tag = "pad" + std::to_string(axis);
    if (mode != "constant") {
      x = mirror_pad(c, x, axis, begin, end, mode == "reflect", tag);
      continue;
    }
    if (begin < 0 || end < 0) {
      const int64_t extent = x.shape()[axis];
      const int64_t from = std::max<int64_t>(-begin, 0), to = extent - std::max<int64_t>(-end, 0);
      if (to <= from)
        c.unsupported("pads " + std::to_string(begin) + ", " + std::to_string(end) + " that crop axis " +
                      std::to_string(axis) + " of extent " + std::to_string(extent) + " to nothing");
      x = c.graph().slice(x, axis, from, to - from, c.value_name() + "." + tag + "_crop");
    }
    std::vector<Tensor> parts;
    if (begin > 0) {
      Shape s = x.shape();
      s.dims[static_cast<size_t>(axis)] = begin;
      parts.push_back(c.filled(s, value, tag + "_begin"));
    }
    parts.push_back(x);
    if (end > 0) {
      Shape s = x.shape();
      s.dims[static_cast<size_t>(axis)] = end;
      parts.push_back(c.filled(s, value, tag + "_end"));
    }
    if (parts.size() > 1) x = c.graph().concat(parts, axis, c.value_name() + "." + tag);
  }
  if (!changed) {
    c.alias_output(0, 0);
    return;
  }
  c.set_output(0, x);
}

void convert_reshape(Converter& c) {
  c.only_attrs({"allowzero"});
  if (c.attr_int("allowzero", 0) != 0) c.unsupported_attr("allowzero", "1 (0 only)");
  const std::vector<int64_t> d = c.input_dims(0);
  const std::vector<int64_t> want = c.require_constant(1, "shape").ints();
  std::vector<int64_t> to(want.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0) {
      if (i >= d.size()) c.unsupported("shape " + dims_text(want) + ": a 0 beyond the input's rank " + std::to_string(d.size()));
      to[i] = d[i];
    } else if (want[i] == -1) {
      if (infer >= 0) c.unsupported("shape " + dims_text(want) + " with two -1");
      infer = static_cast<int>(i);
      continue;
    } else if (want[i] < 0) {
      c.unsupported("shape " + dims_text(want) + " with a negative extent");
    } else {
      to[i] = want[i];
    }
    known *= to[i];
  }
  const int64_t numel = product(d, 0, d.size());
  if (infer >= 0) {
    if (known <= 0 || numel % known != 0)
      c.unsupported("shape " + dims_text(want) + " for an input of shape " + dims_text(d));
    to[static_cast<size_t>(infer)] = numel / known;
  }
  if (product(to, 0, to.size()) != numel)
    c.unsupported("shape " + dims_text(to) + " for an input of shape " + dims_text(d) + " (element counts differ)");
  reshaped_output(c, to);
}

void convert_flatten(Converter& c) {
  c.only_attrs({"axis"});
  const std::vector<int64_t> d = c.input_dims(0);
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(d.size());
  if (axis < 0 || axis > static_cast<int64_t>(d.size())) c.unsupported_attr("axis", std::to_string(c.attr_int("axis", 1)));
  reshaped_output(c, {product(d, 0, static_cast<size_t>(axis)), product(d, static_cast<size_t>(axis), d.size())});
}

void convert_identity(Converter& c) {
  c.only_attrs({});
  c.untied_output(0, 0);
}

}  // namespace corun::onnx_import
