// Gemm and MatMul: the Graph's 2-D matmul (with its transpose flags), Gemm's C as a bias add; MatMul of
// other ranks is batch_matmul (numpy's broadcast batch dims and 1-D rules).
#include "onnx/ops/gemm.hpp"

namespace corun::onnx_import {

void convert_gemm(Converter& c) {
  c.only_attrs({"alpha", "beta", "transA", "transB"});
  if (c.attr_float("alpha", 1.0f) != 1.0f) c.unsupported_attr("alpha", std::to_string(c.attr_float("alpha", 1.0f)) + " (1 only)");
  if (c.has_input(2) && c.attr_float("beta", 1.0f) != 1.0f)
    c.unsupported_attr("beta", std::to_string(c.attr_float("beta", 1.0f)) + " (1 only)");
  const std::vector<int64_t> ad = c.input_dims(0), bd = c.input_dims(1);
  if (ad.size() != 2 || bd.size() != 2) c.unsupported("A " + dims_text(ad) + " and B " + dims_text(bd) + " (2-D only)");
  Graph& g = c.graph();
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  if (!c.has_input(2)) {
    c.set_output(0, g.matmul(c.tensor(0), c.tensor(1), ta, tb, c.value_name()));
    return;
  }
  const Tensor ab = g.matmul(c.tensor(0), c.tensor(1), ta, tb, c.value_name() + ".matmul");
  const std::vector<int64_t> cd = c.input_dims(2);
  const int64_t n = ab.shape()[1];
  Tensor bias = c.tensor(2);
  if (cd.size() == 2 && cd[0] == 1 && cd[1] == n && ab.shape()[0] != 1) {
    bias = g.reshape(bias, Shape{n}, c.value_name() + ".bias");  // [1, N]: the add's row bias
  } else if (!(cd.size() == 1 && cd[0] == n) && !(cd.size() == 2 && cd[0] == ab.shape()[0] && cd[1] == n)) {
    c.unsupported("C of shape " + dims_text(cd) + " for a product of shape " + ab.shape().str());
  }
  c.set_output(0, g.add(ab, bias, c.value_name()));
}

void convert_matmul(Converter& c) {
  c.only_attrs({});
  const std::vector<int64_t> ad = c.input_dims(0), bd = c.input_dims(1);
  if (ad.size() > 4 || bd.size() > 4)
    c.unsupported("A " + dims_text(ad) + " and B " + dims_text(bd) + " (rank 1 to 4 each: corun tensors have at most 4 dims)");
  // The 2-D product stays on matmul (its fused kernels and the passes that look for it); the rest is
  // numpy's batched and 1-D rules.
  if (ad.size() == 2 && bd.size() == 2) {
    c.set_output(0, c.graph().matmul(c.tensor(0), c.tensor(1), false, false, c.value_name()));
    return;
  }
  c.set_output(0, c.graph().batch_matmul(c.tensor(0), c.tensor(1), c.value_name()));
}

}  // namespace corun::onnx_import
