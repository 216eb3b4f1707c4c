// Add, Sub, Mul with the shapes the Graph's add/sub/mul take: the same shape, or (Add) a bias over the last
// dimension. Other broadcasts are an error until numpy broadcasting lands.
#include "onnx/ops/ops.hpp"

namespace corun::onnx_import {

namespace {

bool same_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) { return a == b; }

// [N], [1, N], [1, 1, N] ...: a bias over the last extent `n`.
bool is_row_bias(const std::vector<int64_t>& b, int64_t n, size_t full_rank) {
  if (b.empty() || b.size() > full_rank || b.back() != n) return false;
  for (size_t i = 0; i + 1 < b.size(); ++i)
    if (b[i] != 1) return false;
  return true;
}

[[noreturn]] void bad_shapes(Converter& c, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  c.unsupported("operand shapes " + dims_text(a) + " and " + dims_text(b) + " (broadcasting beyond this is not supported yet)");
}

}  // namespace

void convert_add(Converter& c) {
  c.only_attrs({});
  const std::vector<int64_t> a = c.input_dims(0), b = c.input_dims(1);
  Graph& g = c.graph();
  if (same_dims(a, b)) {
    c.set_output(0, g.add(c.tensor(0), c.tensor(1), c.value_name()));
    return;
  }
  for (int full = 0; full < 2; ++full) {
    const std::vector<int64_t>& fd = full == 0 ? a : b;
    const std::vector<int64_t>& bd = full == 0 ? b : a;
    if (fd.size() < 2 || !is_row_bias(bd, fd.back(), fd.size())) continue;
    Tensor bias = c.tensor(1 - full);
    if (bd.size() > 1) bias = g.reshape(bias, Shape{bd.back()}, c.value_name() + ".bias");
    c.set_output(0, g.add(c.tensor(full), bias, c.value_name()));  // addition commutes: bitwise the same
    return;
  }
  bad_shapes(c, a, b);
}

void convert_sub(Converter& c) {
  c.only_attrs({});
  const std::vector<int64_t> a = c.input_dims(0), b = c.input_dims(1);
  if (!same_dims(a, b)) bad_shapes(c, a, b);
  c.set_output(0, c.graph().sub(c.tensor(0), c.tensor(1), c.value_name()));
}

void convert_mul(Converter& c) {
  c.only_attrs({});
  const std::vector<int64_t> a = c.input_dims(0), b = c.input_dims(1);
  if (!same_dims(a, b)) bad_shapes(c, a, b);
  c.set_output(0, c.graph().mul(c.tensor(0), c.tensor(1), c.value_name()));
}

}  // namespace corun::onnx_import
