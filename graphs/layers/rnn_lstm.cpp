// corun::rnn::lstm — ONNX's LSTM node as corun ops (corun/rnn.hpp).
//
// ONNX stores the gate blocks of W, R and both halves of B in the order i, o, f, c; Graph::lstm_cell wants
// i, f, g (= c), o. The builder reorders them with slices and a concat inside the graph (once per
// direction, outside the time loop), so the ONNX tensors stay the parameters and gradients reach them
// unchanged. The two biases are summed once: gates = x W^T + (Wb + Rb) + h R^T.
#include "graphs/layers/rnn_common.hpp"

#include "graphs/graph_impl.hpp"

#include <tuple>

namespace corun::rnn {

using detail::RnnDims;

namespace {

// ONNX block k of i, o, f, c for each of lstm_cell's blocks i, f, g, o.
const std::vector<int> kOnnxToCell = {0, 2, 3, 1};

struct DirectionState {
  std::vector<Tensor> h;  // per step, time order
  Tensor last_h, last_c;
};

DirectionState one_direction(Graph& g, const RnnDims& d, const RnnOptions& o, int dir, Tensor x2, Tensor w, Tensor r,
                             Tensor b, Tensor initial_h, Tensor initial_c, const std::string& p) {
  const int64_t H = d.hidden, B = d.batch;
  const Tensor wd = detail::reorder_blocks(g, detail::direction_part(g, w, dir, d.dirs, p + ".W"), 0, H, kOnnxToCell,
                                           p + ".W.ifgo");
  const Tensor rd = detail::reorder_blocks(g, detail::direction_part(g, r, dir, d.dirs, p + ".R"), 0, H, kOnnxToCell,
                                           p + ".R.ifgo");
  // Input projection of every step at once: [seq*batch, input] x W^T.
  Tensor xp = g.matmul(x2, wd, false, true, p + ".xw");
  if (b.valid()) {
    const Tensor bd = detail::direction_part(g, b, dir, d.dirs, p + ".B");  // [8H]
    const Tensor bias = g.add(g.slice(bd, 0, 0, 4 * H, p + ".Wb"), g.slice(bd, 0, 4 * H, 4 * H, p + ".Rb"), p + ".bias");
    xp = g.add(xp, detail::reorder_blocks(g, bias, 0, H, kOnnxToCell, p + ".bias.ifgo"), p + ".xp");
  }
  Tensor h = initial_h.valid() ? detail::direction_part(g, initial_h, dir, d.dirs, p + ".h0") : Tensor{};
  Tensor c = initial_c.valid() ? detail::direction_part(g, initial_c, dir, d.dirs, p + ".c0")
                               : detail::zeros(g, Shape{B, H}, p + ".c0");
  DirectionState s;
  s.h.resize(static_cast<size_t>(d.seq));
  const bool backwards = detail::runs_backwards(o, dir);
  for (int64_t k = 0; k < d.seq; ++k) {
    const int64_t t = backwards ? d.seq - 1 - k : k;
    const std::string id = p + ".t" + std::to_string(t);
    Tensor gates = g.slice(xp, 0, t * B, B, "xp." + id);
    // Without an initial h the first step's recurrent term is zero: no matmul.
    if (h.valid()) gates = g.add(gates, g.matmul(h, rd, false, true, "hr." + id), "gates." + id);
    std::tie(h, c) = g.lstm_cell(gates, c, "cell." + id);
    s.h[static_cast<size_t>(t)] = h;
  }
  s.last_h = h, s.last_c = c;
  return s;
}

}  // namespace

RnnOutputs lstm(Graph& g, Tensor x, Tensor w, Tensor r, Tensor b, Tensor initial_h, Tensor initial_c,
                const RnnOptions& options) {
  const std::string p = g.impl().node_name(options.name, "lstm");
  const RnnDims d = detail::check_layer("LSTM", p, 4, options, x, w, r, b, {initial_h, initial_c});
  const Tensor x2 = g.reshape(x, Shape{d.seq * d.batch, d.input}, p + ".x2d");
  std::vector<Tensor> ys, hs, cs;
  for (int dir = 0; dir < d.dirs; ++dir) {
    const std::string pd = d.dirs == 1 ? p : p + (dir == 0 ? ".fw" : ".bw");
    const auto s = one_direction(g, d, options, dir, x2, w, r, b, initial_h, initial_c, pd);
    ys.push_back(detail::stack_steps(g, s.h, d, pd + ".Y"));
    hs.push_back(detail::with_leading_one(g, s.last_h, pd + ".Y_h"));
    cs.push_back(detail::with_leading_one(g, s.last_c, pd + ".Y_c"));
  }
  RnnOutputs out;
  out.y = detail::join_directions(g, ys, 1, p + ".Y");
  out.y_h = detail::join_directions(g, hs, 0, p + ".Y_h");
  out.y_c = detail::join_directions(g, cs, 0, p + ".Y_c");
  return out;
}

}  // namespace corun::rnn
