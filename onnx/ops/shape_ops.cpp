// Transpose, Softmax, LogSoftmax and Dropout: the Graph's transpose, softmax / log_softmax and dropout.
#include "onnx/ops/shape_ops.hpp"

#include "base/hash.hpp"

#include <string>

namespace corun::onnx_import {

namespace {
// Softmax / LogSoftmax. Opset 13 normalises along `axis` (default -1); earlier opsets flatten the input
// to 2-D at `axis` (default 1) and normalise each row, which is a reshape around the same op.
template <typename Op>
void convert_softmax_like(Converter& c, Op op) {
  c.only_attrs({"axis"});
  const std::vector<int64_t> d = c.input_dims(0);
  const int rank = static_cast<int>(d.size());
  Graph& g = c.graph();
  if (c.opset() >= 13) {
    const int axis = normalize_axis(c, c.attr_int("axis", -1), rank, "axis");
    c.set_output(0, (g.*op)(c.tensor(0), axis, c.value_name()));
    return;
  }
  const int axis = normalize_axis(c, c.attr_int("axis", 1), rank, "axis");
  if (axis == rank - 1) {
    c.set_output(0, (g.*op)(c.tensor(0), axis, c.value_name()));
    return;
  }
  int64_t rows = 1, cols = 1;
  for (int i = 0; i < rank; ++i) (i < axis ? rows : cols) *= d[static_cast<size_t>(i)];
  const Tensor flat = g.reshape(c.tensor(0), Shape{rows, cols}, c.value_name() + ".rows");
  const Tensor y = (g.*op)(flat, 1, c.value_name() + ".normalised");
  c.set_output(0, g.reshape(y, Shape::of(d.data(), rank), c.value_name()));
}

// FNV-1a of the node's output name: each Dropout of a file draws its own mask, the same at every import.
int64_t seed_of(const std::string& name) {
  return static_cast<int64_t>(hash::fnv1a(name, hash::kFnvShortBasis) >> 1);
}
}  // namespace

void convert_transpose(Converter& c) {
  c.only_attrs({"perm"});
  const int rank = static_cast<int>(c.input_dims(0).size());
  std::vector<int> perm;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : c.attr_ints("perm")) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)])
      c.unsupported_attr("perm",
                         dims_text(c.attr_ints("perm")) + " (a permutation of 0.." + std::to_string(rank - 1) + ")");
    seen[static_cast<size_t>(p)] = true;
    perm.push_back(static_cast<int>(p));
  }
  if (!perm.empty() && static_cast<int>(perm.size()) != rank)
    c.unsupported_attr("perm",
                       dims_text(c.attr_ints("perm")) + " (one entry per input dim: " + std::to_string(rank) + ")");
  if (c.foldable(0)) {  // a constant (PyTorch's padding modules transpose their pads): permuted at import
    const Constant* k = c.constant(0);
    const std::vector<int64_t> d = c.input_dims(0);
    if (perm.empty())
      for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
    Constant out;
    out.integer = k->integer;
    for (int p : perm) out.dims.push_back(d[static_cast<size_t>(p)]);
    out.values.resize(k->values.size());
    std::vector<int64_t> stride(static_cast<size_t>(rank), 1), idx(static_cast<size_t>(rank), 0);
    for (int i = rank - 2; i >= 0; --i) stride[static_cast<size_t>(i)] = stride[static_cast<size_t>(i) + 1] * d[static_cast<size_t>(i) + 1];
    for (size_t o = 0; o < out.values.size(); ++o) {  // idx: the output's multi-index, row-major
      int64_t from = 0;
      for (int i = 0; i < rank; ++i) from += idx[static_cast<size_t>(i)] * stride[static_cast<size_t>(perm[static_cast<size_t>(i)])];
      out.values[o] = k->values[static_cast<size_t>(from)];
      for (int i = rank - 1; i >= 0 && ++idx[static_cast<size_t>(i)] == out.dims[static_cast<size_t>(i)]; --i) idx[static_cast<size_t>(i)] = 0;
    }
    c.set_output(0, std::move(out));
    return;
  }
  c.set_output(0, c.graph().transpose(c.tensor(0), perm, c.value_name()));
}

void convert_softmax(Converter& c) {
  convert_softmax_like(c, &Graph::softmax);
}
void convert_log_softmax(Converter& c) {
  convert_softmax_like(c, &Graph::log_softmax);
}

void convert_dropout(Converter& c) {
  c.only_attrs({"ratio", "seed", "is_test"});
  if (c.node().output_size() > 1 && !c.node().output(1).empty()) c.unsupported("the mask output is not supported");
  float ratio = c.attr_float("ratio", 0.5f);
  if (c.has_input(1)) {
    const Constant& r = c.require_constant(1, "ratio");
    if (r.numel() != 1) c.unsupported("a ratio of shape " + dims_text(r.dims) + " (a scalar)");
    ratio = static_cast<float>(r.values[0]);
  }
  if (!(ratio >= 0.0f && ratio < 1.0f)) c.unsupported("ratio " + std::to_string(ratio) + " (0 <= ratio < 1)");
  // training_mode (opset 12+) decides when the file gives it; otherwise the import's training option does
  // (a model exported for inference and imported to train keeps its dropout).
  bool training = c.training() && c.attr_int("is_test", 0) == 0;
  if (c.has_input(2)) {
    const Constant& t = c.require_constant(2, "training_mode");
    if (t.numel() != 1) c.unsupported("a training_mode of shape " + dims_text(t.dims) + " (a scalar)");
    training = t.values[0] != 0.0;
  }
  const int64_t seed = c.has_attr("seed") ? c.attr_int("seed", 0) : seed_of(c.node().output(0));
  c.set_output(0, c.graph().dropout(c.tensor(0), ratio, seed, training, Tensor(), c.value_name()));
}

}  // namespace corun::onnx_import
