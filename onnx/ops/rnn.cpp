// LSTM and GRU: corun::rnn::lstm / gru, which take ONNX's layouts and gate orders as they are. Every
// attribute is passed through; the builders refuse the values they do not implement (peepholes,
// sequence_lens, other activations, a finite clip, layout 1, input_forget 1, GRU linear_before_reset 0)
// with a message the importer prefixes with the node's name.
#include "onnx/ops/rnn.hpp"

#include <corun/rnn.hpp>

namespace corun::onnx_import {

namespace {

rnn::RnnOptions rnn_options(Converter& c) {
  rnn::RnnOptions o;
  o.direction = rnn::parse_direction(c.attr_string("direction", "forward"));
  o.hidden_size = c.attr_int("hidden_size", 0);
  for (const auto& a : c.node().attribute()) {
    if (a.name() == "activations") o.activations.assign(a.strings().begin(), a.strings().end());
    if (a.name() == "activation_alpha") o.activation_alpha.assign(a.floats().begin(), a.floats().end());
    if (a.name() == "activation_beta") o.activation_beta.assign(a.floats().begin(), a.floats().end());
  }
  if (c.has_attr("clip")) o.clip = c.attr_float("clip", 0.0f);
  o.layout = static_cast<int>(c.attr_int("layout", 0));
  o.name = c.value_name();
  // sequence_lens: refused here, as the builder would (an INT32 tensor is no float graph value).
  if (c.has_input(4)) c.unsupported("input sequence_lens is not supported (every sequence has the full length)");
  return o;
}

Tensor optional_tensor(Converter& c, int i) {
  return c.has_input(i) ? c.tensor(i) : Tensor{};
}

void set_outputs(Converter& c, const rnn::RnnOutputs& out) {
  c.set_output(0, out.y);
  c.set_output(1, out.y_h);
  if (out.y_c.valid()) c.set_output(2, out.y_c);
}

}  // namespace

void convert_lstm(Converter& c) {
  c.only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
                "input_forget", "layout"});
  rnn::RnnOptions o = rnn_options(c);
  o.input_forget = static_cast<int>(c.attr_int("input_forget", 0));
  if (c.has_input(7)) c.unsupported("input P (peepholes) is not supported");
  set_outputs(c, rnn::lstm(c.graph(), c.tensor(0), c.tensor(1), c.tensor(2), optional_tensor(c, 3),
                           optional_tensor(c, 5), optional_tensor(c, 6), o));
}

void convert_gru(Converter& c) {
  c.only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
                "linear_before_reset", "layout"});
  rnn::RnnOptions o = rnn_options(c);
  // ONNX's default is 0, which the builder refuses with a message saying so: pass the file's value.
  o.linear_before_reset = static_cast<int>(c.attr_int("linear_before_reset", 0));
  set_outputs(
      c, rnn::gru(c.graph(), c.tensor(0), c.tensor(1), c.tensor(2), optional_tensor(c, 3), optional_tensor(c, 5), o));
}

}  // namespace corun::onnx_import
