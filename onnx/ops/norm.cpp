// BatchNormalization and LayerNormalization: the Graph's batch_norm and layer_norm, which follow ONNX's
// definitions (ONNX momentum, biased variance for normalising). BatchNormalization's running statistics
// become Graph::state tensors holding the file's values, so they are saved with the parameters and, when
// the import is for training, updated by the node instead of being trained by the optimizer.
#include "onnx/ops/norm.hpp"

namespace corun::onnx_import {

void convert_batch_norm(Converter& c) {
  c.only_attrs({"epsilon", "momentum", "training_mode", "spatial"});
  if (c.attr_int("spatial", 1) != 1) c.unsupported_attr("spatial", "0 (1 only: statistics per channel)");
  const std::vector<int64_t> xd = c.input_dims(0);
  if (xd.size() < 2 || xd.size() > 4) c.unsupported("input of shape " + dims_text(xd) + " (rank 2 to 4, [N, C, ...])");
  for (int i = 1; i <= 4; ++i) {
    const std::vector<int64_t> d = c.input_dims(i);
    if (d.size() != 1 || d[0] != xd[1])
      c.unsupported("input " + std::to_string(i) + " has shape " + dims_text(d) + "; scale, B, mean and var must be [" +
                    std::to_string(xd[1]) + "] (the channels of X)");
  }
  // The file's training_mode (opset 14+) trains even in an inference import: ONNX then uses batch statistics.
  const bool training = c.training() || c.attr_int("training_mode", 0) != 0;
  const Tensor y =
      c.graph().batch_norm(c.tensor(0), c.tensor(1), c.tensor(2), c.state_tensor(3), c.state_tensor(4),
                           c.attr_float("epsilon", 1e-5f), c.attr_float("momentum", 0.9f), training, c.value_name());
  c.set_output(0, y);
  // running_mean / running_var outputs (training_mode 1): the state tensors, which the node updates each run.
  if (c.node().output_size() > 1) c.set_output(1, c.state_tensor(3));
  if (c.node().output_size() > 2) c.set_output(2, c.state_tensor(4));
}

void convert_layer_norm(Converter& c) {
  c.only_attrs({"axis", "epsilon", "stash_type"});
  if (c.attr_int("stash_type", 1) != 1)
    c.unsupported_attr("stash_type", std::to_string(c.attr_int("stash_type", 1)) + " (1 only: float statistics)");
  const std::vector<int64_t> xd = c.input_dims(0);
  const int rank = static_cast<int>(xd.size());
  const int axis = normalize_axis(c, c.attr_int("axis", -1), rank, "axis");
  const Shape normalised = Shape::of(xd.data() + axis, rank - axis);
  Graph& g = c.graph();
  const Tensor bias = c.has_input(2) ? c.tensor(2) : c.filled(normalised, 0.0f, "bias");
  const std::string name = c.value_name();
  c.set_output(0, g.layer_norm(c.tensor(0), c.tensor(1), bias, axis, c.attr_float("epsilon", 1e-5f), name));
  // Mean and InvStdDev: ONNX gives them X's shape with the normalised extents 1; the Graph's are [rows].
  std::vector<int64_t> stat_dims(xd.begin(), xd.begin() + axis);
  stat_dims.resize(static_cast<size_t>(rank), 1);
  const Shape stat_shape = Shape::of(stat_dims.data(), rank);
  if (c.node().output_size() > 1 && !c.node().output(1).empty())
    c.set_output(1, g.reshape(g.find(name + ".mean"), stat_shape, c.value_name(1)));
  if (c.node().output_size() > 2 && !c.node().output(2).empty())
    c.set_output(2, g.reshape(g.find(name + ".invstd"), stat_shape, c.value_name(2)));
}

}  // namespace corun::onnx_import
