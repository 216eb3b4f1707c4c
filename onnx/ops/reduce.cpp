// ReduceMean, ReduceSum and GlobalAveragePool: the Graph's reduce_mean / reduce_sum_axes over constant axes.
// The axes are an attribute (ReduceMean through opset 17, ReduceSum through 12) or a constant second input
// (ReduceSum from opset 13); both forms are read whatever the opset, as exporters write either.
#include "onnx/ops/reduce.hpp"

namespace corun::onnx_import {

namespace {

using ReduceBuilder = Tensor (Graph::*)(Tensor, std::vector<int>, bool, const std::string&);

void convert_reduce(Converter& c, ReduceBuilder op) {
  c.only_attrs({"axes", "keepdims", "noop_with_empty_axes"});
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (c.has_input(1)) {
    if (c.has_attr("axes")) c.unsupported("axes given both as an attribute and as input 1");
    axes = c.require_constant(1, "axes").ints();
  }
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0) != 0) {
    c.alias_output(0, 0);  // ONNX: no axes with noop_with_empty_axes = 1 is the identity
    return;
  }
  const int rank = static_cast<int>(c.input_dims(0).size());
  std::vector<int> normalised;
  for (int64_t a : axes) normalised.push_back(normalize_axis(c, a, rank, "axis"));
  c.set_output(0, (c.graph().*op)(c.tensor(0), normalised, c.attr_int("keepdims", 1) != 0, c.value_name()));
}

}  // namespace

void convert_reduce_mean(Converter& c) {
  convert_reduce(c, &Graph::reduce_mean);
}
void convert_reduce_sum(Converter& c) {
  convert_reduce(c, &Graph::reduce_sum_axes);
}

void convert_global_average_pool(Converter& c) {
  c.only_attrs({});
  const std::vector<int64_t> xd = c.input_dims(0);
  if (xd.size() < 3) c.unsupported("input of shape " + dims_text(xd) + " ([N, C, spatial...], rank 3 or 4)");
  std::vector<int> spatial;
  for (int a = 2; a < static_cast<int>(xd.size()); ++a) spatial.push_back(a);
  c.set_output(0, c.graph().reduce_mean(c.tensor(0), spatial, true, c.value_name()));
}

}  // namespace corun::onnx_import
