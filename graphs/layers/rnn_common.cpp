// Shared checks and glue of the ONNX LSTM / GRU layer builders (rnn_common.hpp).
#include "graphs/layers/rnn_common.hpp"

#include "base/check.hpp"
#include "graphs/graph_impl.hpp"

#include <cmath>
#include <sstream>

namespace corun::rnn {

Direction parse_direction(const std::string& text) {
  if (text == "forward") return Direction::forward;
  if (text == "reverse") return Direction::reverse;
  if (text == "bidirectional") return Direction::bidirectional;
  corun::detail::fail(Status::invalid_argument,
                      "RNN direction '" + text + "' is not one of forward, reverse, bidirectional");
}

namespace detail {
namespace {

[[noreturn]] void refuse(const char* op, const std::string& layer, const std::string& what) {
  corun::detail::fail(Status::invalid_argument, std::string(op) + " layer '" + layer + "': " + what);
}

void check_shape(const char* op, const std::string& layer, const char* label, Tensor t, const Shape& want) {
  if (t.shape() != want)
    refuse(op, layer, std::string(label) + " must be " + want.str() + " (ONNX layout), got " + t.shape().str());
}

}  // namespace

RnnDims check_layer(const char* op, const std::string& layer, int gates, const RnnOptions& o, Tensor x, Tensor w,
                    Tensor r, Tensor b, const std::vector<Tensor>& initial) {
  const bool lstm = gates == 4;
  if (o.peepholes.valid()) refuse(op, layer, "peepholes (input P) are not supported; export without them");
  if (o.sequence_lens.valid())
    refuse(op, layer, "sequence_lens is not supported: every sequence runs the full length (pad the batch)");
  const std::vector<std::string> defaults =
      lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"} : std::vector<std::string>{"Sigmoid", "Tanh"};
  const int dirs = o.direction == Direction::bidirectional ? 2 : 1;
  if (!o.activations.empty()) {
    bool ok = o.activations.size() == defaults.size() * static_cast<size_t>(dirs);
    for (size_t k = 0; ok && k < o.activations.size(); ++k) ok = o.activations[k] == defaults[k % defaults.size()];
    if (!ok) {
      std::ostringstream s;
      s << "activations [";
      for (size_t k = 0; k < o.activations.size(); ++k) s << (k ? ", " : "") << o.activations[k];
      s << "] are not supported: only the defaults (" << (lstm ? "Sigmoid, Tanh, Tanh" : "Sigmoid, Tanh")
        << " per direction)";
      refuse(op, layer, s.str());
    }
  }
  if (!o.activation_alpha.empty() || !o.activation_beta.empty())
    refuse(op, layer, "activation_alpha / activation_beta are not supported (the default activations take none)");
  if (o.clip && !std::isinf(*o.clip))
    refuse(op, layer, "clip = " + std::to_string(*o.clip) + " is not supported (only no clipping)");
  if (o.layout != 0) refuse(op, layer, "layout = " + std::to_string(o.layout) + " is not supported (only 0: [seq, batch, ...])");
  if (o.input_forget != 0) {
    if (!lstm) refuse(op, layer, "input_forget is an LSTM attribute");
    refuse(op, layer, "input_forget = " + std::to_string(o.input_forget) + " is not supported (only 0)");
  }
  if (lstm && o.linear_before_reset != 1) refuse(op, layer, "linear_before_reset is a GRU attribute");
  if (!lstm && o.linear_before_reset != 1)
    refuse(op, layer,
           "linear_before_reset = " + std::to_string(o.linear_before_reset) +
               " is not supported: only 1 (PyTorch's GRU and its export; the reset gate applied before the "
               "recurrent matmul would split the cell in two)");
  for (Tensor t : {x, w, r})
    if (!t.valid()) refuse(op, layer, "X, W and R are required");
  if (x.shape().rank != 3) refuse(op, layer, "X must be 3-D [seq, batch, input], got " + x.shape().str());
  if (r.shape().rank != 3 || r.shape()[1] % gates != 0)
    refuse(op, layer, "R must be [dirs, " + std::to_string(gates) + " * hidden, hidden], got " + r.shape().str());
  RnnDims d;
  d.seq = x.shape()[0], d.batch = x.shape()[1], d.input = x.shape()[2];
  d.hidden = r.shape()[2];
  d.dirs = dirs;
  if (o.hidden_size != 0 && o.hidden_size != d.hidden)
    refuse(op, layer, "hidden_size = " + std::to_string(o.hidden_size) + " but R " + r.shape().str() +
                          " has hidden " + std::to_string(d.hidden));
  const int64_t G = gates * d.hidden;
  check_shape(op, layer, "W", w, Shape{dirs, G, d.input});
  check_shape(op, layer, "R", r, Shape{dirs, G, d.hidden});
  if (b.valid()) check_shape(op, layer, "B", b, Shape{dirs, 2 * G});
  const char* labels[] = {"initial_h", "initial_c"};
  for (size_t k = 0; k < initial.size(); ++k)
    if (initial[k].valid()) check_shape(op, layer, labels[k], initial[k], Shape{dirs, d.batch, d.hidden});
  return d;
}

Tensor direction_part(Graph& g, Tensor t, int d, int dirs, const std::string& name) {
  const Shape s = t.shape();
  Shape rest;
  rest.rank = s.rank - 1;
  for (int k = 1; k < s.rank; ++k) rest.dims[static_cast<size_t>(k - 1)] = s[k];
  const Tensor part = dirs == 1 ? t : g.slice(t, 0, d, 1, name + ".slice");
  return g.reshape(part, rest, name);
}

Tensor reorder_blocks(Graph& g, Tensor t, int dim, int64_t h, const std::vector<int>& blocks, const std::string& name) {
  bool identity = true;
  for (size_t k = 0; k < blocks.size(); ++k) identity = identity && blocks[k] == static_cast<int>(k);
  if (identity) return t;
  std::vector<Tensor> parts;
  for (size_t k = 0; k < blocks.size(); ++k)
    parts.push_back(g.slice(t, dim, blocks[k] * h, h, name + ".block" + std::to_string(k)));
  return g.concat(parts, dim, name);
}

Tensor zeros(Graph& g, const Shape& shape, const std::string& name) {
  return Tensor(&g.impl(), g.impl().add_value(shape, name, ValueKind::constant));
}

Tensor stack_steps(Graph& g, const std::vector<Tensor>& steps, const RnnDims& d, const std::string& name) {
  const Tensor all = steps.size() == 1 ? steps[0] : g.concat(steps, 0, name + ".steps");
  return g.reshape(all, Shape{d.seq, 1, d.batch, d.hidden}, name);
}

Tensor join_directions(Graph& g, const std::vector<Tensor>& parts, int dim, const std::string& name) {
  return parts.size() == 1 ? parts[0] : g.concat(parts, dim, name);
}

Tensor with_leading_one(Graph& g, Tensor t, const std::string& name) {
  return g.reshape(t, Shape{1, t.shape()[0], t.shape()[1]}, name);
}

bool runs_backwards(const RnnOptions& o, int d) {
  return o.direction == Direction::reverse || (o.direction == Direction::bidirectional && d == 1);
}

}  // namespace detail
}  // namespace corun::rnn
