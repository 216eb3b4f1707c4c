// corun::rnn::gru — ONNX's GRU node (linear_before_reset = 1) as corun ops (corun/rnn.hpp).
//
// ONNX's gate order z, r, h is Graph::gru_cell's, so W, R and B are used as they are. The input bias Wb
// joins the input projection of all steps; the recurrent bias Rb joins each step's recurrent projection,
// where the cell's reset gate multiplies its n block (Rbn) as ONNX and PyTorch do.
#include "graphs/layers/rnn_common.hpp"

#include "graphs/graph_impl.hpp"

namespace corun::rnn {

using detail::RnnDims;

namespace {

struct DirectionState {
  std::vector<Tensor> h;  // per step, time order
  Tensor last_h;
};

DirectionState one_direction(Graph& g, const RnnDims& d, const RnnOptions& o, int dir, Tensor x2, Tensor w, Tensor r,
                             Tensor b, Tensor initial_h, const std::string& p) {
  const int64_t H = d.hidden, B = d.batch;
  const Tensor wd = detail::direction_part(g, w, dir, d.dirs, p + ".W");
  const Tensor rd = detail::direction_part(g, r, dir, d.dirs, p + ".R");
  Tensor xp = g.matmul(x2, wd, false, true, p + ".xw");  // every step at once: [seq*batch, input] x W^T
  Tensor rb;
  if (b.valid()) {
    const Tensor bd = detail::direction_part(g, b, dir, d.dirs, p + ".B");  // [6H]
    xp = g.add(xp, g.slice(bd, 0, 0, 3 * H, p + ".Wb"), p + ".xp");
    rb = g.slice(bd, 0, 3 * H, 3 * H, p + ".Rb");
  }
  Tensor h = initial_h.valid() ? detail::direction_part(g, initial_h, dir, d.dirs, p + ".h0") : Tensor{};
  DirectionState s;
  s.h.resize(static_cast<size_t>(d.seq));
  const bool backwards = detail::runs_backwards(o, dir);
  for (int64_t k = 0; k < d.seq; ++k) {
    const int64_t t = backwards ? d.seq - 1 - k : k;
    const std::string id = p + ".t" + std::to_string(t);
    const Tensor xpt = g.slice(xp, 0, t * B, B, "xp." + id);
    Tensor hp;
    if (h.valid()) {
      hp = g.matmul(h, rd, false, true, "hr." + id);
      if (rb.valid()) hp = g.add(hp, rb, "hp." + id);
    } else {  // no initial h: zero state, so the recurrent projection is Rb alone (no matmul)
      h = detail::zeros(g, Shape{B, H}, p + ".h0");
      hp = detail::zeros(g, Shape{B, 3 * H}, "hr." + id);
      if (rb.valid()) hp = g.add(hp, rb, "hp." + id);
    }
    h = g.gru_cell(xpt, hp, h, "cell." + id);
    s.h[static_cast<size_t>(t)] = h;
  }
  s.last_h = h;
  return s;
}

}  // namespace

RnnOutputs gru(Graph& g, Tensor x, Tensor w, Tensor r, Tensor b, Tensor initial_h, const RnnOptions& options) {
  const std::string p = g.impl().node_name(options.name, "gru");
  const RnnDims d = detail::check_layer("GRU", p, 3, options, x, w, r, b, {initial_h});
  const Tensor x2 = g.reshape(x, Shape{d.seq * d.batch, d.input}, p + ".x2d");
  std::vector<Tensor> ys, hs;
  for (int dir = 0; dir < d.dirs; ++dir) {
    const std::string pd = d.dirs == 1 ? p : p + (dir == 0 ? ".fw" : ".bw");
    const auto s = one_direction(g, d, options, dir, x2, w, r, b, initial_h, pd);
    ys.push_back(detail::stack_steps(g, s.h, d, pd + ".Y"));
    hs.push_back(detail::with_leading_one(g, s.last_h, pd + ".Y_h"));
  }
  RnnOutputs out;
  out.y = detail::join_directions(g, ys, 1, p + ".Y");
  out.y_h = detail::join_directions(g, hs, 0, p + ".Y_h");
  return out;
}

}  // namespace corun::rnn
