// Reverse-mode autodiff: appends gradient nodes to the same graph, so a training step is one graph.
//
// Nodes are visited in reverse creation order (a reverse topological order). Each visited node turns the
// gradients of its outputs into contributions to the gradients of its inputs. Contributions to one value
// are summed in the order they are produced, which is fixed by the graph, so the result never depends on
// timing or policy. A weight gradient that gets many matmul contributions (an LSTM weight over timesteps)
// is accumulated in place (C += A*B, one RW chain), never through one temporary per timestep.
#include <corun/graph.hpp>

#include "codelets/sgd_momentum/sgd_momentum.hpp"
#include "base/check.hpp"
#include "graphs/graph_impl.hpp"

#include <algorithm>

namespace corun {

using codelets::Access;
using codelets::OpCall;
using codelets::OpKind;
using detail::GraphImpl;

namespace {

class Autodiff {
 public:
  explicit Autodiff(GraphImpl& g) : g_(g), owned_(g.values.size(), false) {}

  void run(int loss, const BackwardOptions& options);

 private:
  // A value that needs a gradient: a parameter, or anything computed from one.
  std::vector<bool> needs_grad() const;
  void visit(const detail::Node& node);

  int new_grad_value(const Shape& shape, const std::string& name) {
    const int v = g_.add_value(shape, name, ValueKind::gradient);
    owned_.push_back(false);
    return v;
  }
  int constant(const Shape& shape, float fill, const std::string& name) {
    const int v = g_.add_value(shape, name, ValueKind::constant);
    owned_.push_back(false);
    std::fill_n(g_.values.back().data.get(), shape.numel(), fill);
    return v;
  }
  // Appends a gradient node. `bufs` are (value, access, view shape) triples in buffer order.
  struct Buf {
    int value;
    Access mode;
    Shape view;
  };
  void node(OpKind kind, const std::string& name, const std::vector<Buf>& bufs,
            std::array<int64_t, codelets::kMaxIntAttrs> iattr = {}, float fattr = 0.0f) {
    OpCall call;
    call.kind = kind;
    call.i = iattr;
    call.f = fattr;
    std::vector<int> ids;
    for (const Buf& b : bufs) {
      call.shapes.push_back(b.view);
      call.modes.push_back(b.mode);
      ids.push_back(b.value);
    }
    g_.add_node(name, std::move(call), std::move(ids), true);
  }
  // By value: adding values reallocates g_.values, so references into it must not outlive a node().
  Shape shape(int v) const { return g_.values[static_cast<size_t>(v)].shape; }
  std::string name(int v) const { return g_.values[static_cast<size_t>(v)].name; }

  // Adds `c` to grad(v). `exclusive`: c was made for v alone, so later contributions may update it in place.
  void contribute(int v, int c, bool exclusive);
  // grad(v) += op(a) * op(b): accumulated in place when grad(v) is exclusively v's.
  void contribute_matmul(int v, int a, bool ta, int b, bool tb);
  // A fresh gradient value for v produced by one node (`fill` appends that node).
  template <class Fill>
  void contribute_new(int v, const Shape& s, const std::string& what, Fill fill) {
    const int c = new_grad_value(s, "d" + name(v) + what);
    fill(c);
    contribute(v, c, true);
  }

  GraphImpl& g_;
  std::vector<bool> owned_;
  std::vector<bool> needs_;
  int counter_ = 0;
};

std::vector<bool> Autodiff::needs_grad() const {
  std::vector<bool> needs(g_.values.size(), false);
  for (size_t v = 0; v < g_.values.size(); ++v) needs[v] = g_.values[v].kind == ValueKind::param;
  for (const auto& n : g_.nodes) {
    bool any = false;
    for (size_t b = 0; b < n.buffers.size(); ++b)
      if (n.call.modes[b] == Access::read && needs[static_cast<size_t>(n.buffers[b])]) any = true;
    if (!any) continue;
    for (size_t b = 0; b < n.buffers.size(); ++b)
      if (n.call.modes[b] != Access::read) needs[static_cast<size_t>(n.buffers[b])] = true;
  }
  return needs;
}

void Autodiff::contribute(int v, int c, bool exclusive) {
  const int gv = g_.grad_of[static_cast<size_t>(v)];
  if (gv < 0) {
    g_.grad_of[static_cast<size_t>(v)] = c;
    owned_[static_cast<size_t>(c)] = exclusive;
    return;
  }
  const int sum = new_grad_value(shape(v), "d" + name(v) + ".acc" + std::to_string(counter_++));
  node(OpKind::add, "grad_acc." + name(v) + "." + std::to_string(counter_),
       {{gv, Access::read, shape(v)}, {c, Access::read, shape(v)}, {sum, Access::write, shape(v)}});
  g_.grad_of[static_cast<size_t>(v)] = sum;
  owned_[static_cast<size_t>(sum)] = true;
}

void Autodiff::contribute_matmul(int v, int a, bool ta, int b, bool tb) {
  const Shape sv = shape(v);
  const int gv = g_.grad_of[static_cast<size_t>(v)];
  const bool in_place = gv >= 0 && owned_[static_cast<size_t>(gv)];
  int dst = in_place ? gv : new_grad_value(sv, "d" + name(v) + ".mm" + std::to_string(counter_++));
  node(OpKind::matmul, "grad_mm." + name(v) + "." + std::to_string(counter_++),
       {{a, Access::read, shape(a)}, {b, Access::read, shape(b)}, {dst, in_place ? Access::readwrite : Access::write, sv}},
       {ta, tb, in_place ? 1 : 0, 0});
  if (!in_place) contribute(v, dst, true);
}

void Autodiff::visit(const detail::Node& n) {
  const OpCall& call = n.call;
  const auto& bufs = n.buffers;
  auto in = [&](int k) { return bufs[static_cast<size_t>(k)]; };
  auto need = [&](int k) { return needs_[static_cast<size_t>(in(k))]; };
  auto grad = [&](int v) { return g_.grad_of[static_cast<size_t>(v)]; };
  const std::string tag = "grad." + n.name;

  switch (call.kind) {
    case OpKind::matmul: {
      const int a = in(0), b = in(1), dc = grad(in(2));
      if (dc < 0) return;
      const bool ta = call.i[0] != 0, tb = call.i[1] != 0;
      // C = X Y with X = op(A), Y = op(B): dX = dC Y^T, dY = X^T dC, then undo the transposes.
      if (need(0)) ta ? contribute_matmul(a, b, tb, dc, true) : contribute_matmul(a, dc, false, b, !tb);
      if (need(1)) tb ? contribute_matmul(b, dc, true, a, ta) : contribute_matmul(b, a, !ta, dc, false);
      return;
    }
    case OpKind::add:
    case OpKind::sub: {
      const int a = in(0), b = in(1), dc = grad(in(2));
      if (dc < 0) return;
      if (need(0)) contribute(a, dc, false);
      if (!need(1)) return;
      const Shape sa = shape(a);
      const Shape sb = shape(b);
      if (call.kind == OpKind::add && sb == sa) {
        contribute(b, dc, false);
      } else if (call.kind == OpKind::add) {  // bias: sum dC over all rows, viewed as [rows, N]
        const int64_t cols = sb[0];
        contribute_new(b, sb, ".bias", [&](int c) {
          node(OpKind::sum, tag + ".db", {{dc, Access::read, Shape{sa.numel() / cols, cols}}, {c, Access::write, sb}},
               {0, 0, 0, 0}, 1.0f);
        });
      } else {  // d(A - B)/dB = -dC, as 0 - dC
        const int zero = constant(sb, 0.0f, tag + ".zeros");
        contribute_new(b, sb, ".neg", [&](int c) {
          node(OpKind::sub, tag + ".db", {{zero, Access::read, sb}, {dc, Access::read, sb}, {c, Access::write, sb}});
        });
      }
      return;
    }
    case OpKind::mul: {
      const int a = in(0), b = in(1), dc = grad(in(2));
      if (dc < 0) return;
      const Shape s = shape(a);
      if (need(0))
        contribute_new(a, s, ".mul", [&](int c) {
          node(OpKind::mul, tag + ".da", {{dc, Access::read, s}, {b, Access::read, s}, {c, Access::write, s}});
        });
      if (need(1))
        contribute_new(b, s, ".mul", [&](int c) {
          node(OpKind::mul, tag + ".db", {{dc, Access::read, s}, {a, Access::read, s}, {c, Access::write, s}});
        });
      return;
    }
    case OpKind::sigmoid:
    case OpKind::tanh:
    case OpKind::relu: {
      const int x = in(0), y = in(1), dy = grad(y);
      if (dy < 0 || !need(0)) return;
      const Shape s = shape(x);
      const OpKind gk = call.kind == OpKind::sigmoid ? OpKind::sigmoid_grad
                        : call.kind == OpKind::tanh  ? OpKind::tanh_grad
                                                     : OpKind::relu_grad;
      // sigmoid/tanh derivatives are cheapest from the output, relu's from the input.
      const int first = call.kind == OpKind::relu ? x : y;
      contribute_new(x, s, "", [&](int c) {
        node(gk, tag, {{first, Access::read, s}, {dy, Access::read, s}, {c, Access::write, s}});
      });
      return;
    }
    case OpKind::concat: {
      const int k = static_cast<int>(bufs.size()) - 1;
      const int dy = grad(in(k));
      if (dy < 0) return;
      std::vector<Buf> b{{dy, Access::read, shape(in(k))}};
      std::vector<std::pair<int, int>> pieces;  // (input value, its gradient piece)
      for (int j = 0; j < k; ++j) {
        const int piece = new_grad_value(shape(in(j)), "d" + name(in(j)) + ".cat" + std::to_string(counter_++));
        b.push_back({piece, Access::write, shape(in(j))});
        pieces.emplace_back(in(j), piece);
      }
      node(OpKind::split, tag, b, call.i);
      for (auto [v, piece] : pieces)
        if (needs_[static_cast<size_t>(v)]) contribute(v, piece, true);
      return;
    }
    case OpKind::split: {
      const int x = in(0);
      if (!need(0)) return;
      std::vector<Buf> b;
      bool any = false;
      for (size_t j = 1; j < bufs.size(); ++j) {
        int dy = grad(bufs[j]);
        any = any || dy >= 0;
        if (dy < 0) dy = constant(shape(bufs[j]), 0.0f, tag + ".zeros" + std::to_string(j));
        b.push_back({dy, Access::read, shape(bufs[j])});
      }
      if (!any) return;
      contribute_new(x, shape(x), ".cat", [&](int c) {
        b.push_back({c, Access::write, shape(x)});
        node(OpKind::concat, tag, b, call.i);
      });
      return;
    }
    case OpKind::slice: {
      const int x = in(0), dy = grad(in(1));
      if (dy < 0 || !need(0)) return;
      contribute_new(x, shape(x), ".slice", [&](int c) {
        node(OpKind::slice_grad, tag, {{dy, Access::read, shape(in(1))}, {c, Access::write, shape(x)}}, call.i);
      });
      return;
    }
    case OpKind::sum: {
      const int x = in(0), dy = grad(in(1));
      if (dy < 0 || !need(0)) return;
      contribute_new(x, shape(x), ".sum", [&](int c) {
        node(OpKind::sum_grad, tag, {{dy, Access::read, call.shapes[1]}, {c, Access::write, call.shapes[0]}}, call.i,
             call.f);
      });
      return;
    }
    case OpKind::lstm_cell: {
      // Buffers Z, Cp -> C, H, A, TC. grad(C) holds every contribution from C's readers outside the cell
      // (all created later, so already visited); the kernel adds the path through H itself.
      const int z = in(0), cp = in(1), c = in(2), h = in(3), act = in(4), tc = in(5);
      CORUN_CHECK(grad(act) < 0 && grad(tc) < 0, Status::invalid_argument,
                  "backward: lstm_cell '" << n.name << "': its saved activations (" << name(act) << ", " << name(tc)
                                          << ") are not differentiable; build on its h and c outputs only");
      int dh = grad(h), dc = grad(c);
      if ((dh < 0 && dc < 0) || (!need(0) && !need(1))) return;
      const Shape sz = shape(z), sc = shape(c);
      if (dh < 0) dh = constant(sc, 0.0f, tag + ".zero_dh");
      if (dc < 0) dc = constant(sc, 0.0f, tag + ".zero_dc");
      const int dz = new_grad_value(sz, "d" + name(z));
      const int dcp = new_grad_value(sc, "d" + name(cp) + ".cell");
      node(OpKind::lstm_cell_grad, tag,
           {{act, Access::read, sz}, {cp, Access::read, sc}, {tc, Access::read, sc}, {dh, Access::read, sc},
            {dc, Access::read, sc}, {dz, Access::write, sz}, {dcp, Access::write, sc}});
      if (need(0)) contribute(z, dz, true);
      if (need(1)) contribute(cp, dcp, true);
      return;
    }
    case OpKind::softmax_xent: {
      const int z = in(0), t = in(1), p = in(2), dl = grad(in(3));
      if (dl < 0 || !need(0)) return;
      contribute_new(z, shape(z), "", [&](int c) {
        node(OpKind::softmax_xent_grad, tag,
             {{p, Access::read, shape(p)}, {t, Access::read, shape(t)}, {dl, Access::read, shape(in(3))},
              {c, Access::write, shape(z)}});
      });
      return;
    }
    case OpKind::conv2d: {
      // Buffers X, W, B -> Y. dX by backward-data; dW and dB together by backward-filter (one pass over dY).
      const int x = in(0), w = in(1), b = in(2), dy = grad(in(3));
      if (dy < 0) return;
      const Shape sy = shape(in(3)), sw = shape(w), sb = shape(b);
      if (need(0))
        contribute_new(x, shape(x), ".conv", [&](int c) {
          node(OpKind::conv2d_grad_data, tag + ".dx",
               {{dy, Access::read, sy}, {w, Access::read, sw}, {c, Access::write, shape(x)}}, call.i);
        });
      if (!need(1) && !need(2)) return;
      const int dw = new_grad_value(sw, "d" + name(w) + ".conv" + std::to_string(counter_++));
      const int db = new_grad_value(sb, "d" + name(b) + ".conv" + std::to_string(counter_++));
      node(OpKind::conv2d_grad_filter, tag + ".dw",
           {{x, Access::read, shape(x)}, {dy, Access::read, sy}, {dw, Access::write, sw}, {db, Access::write, sb}},
           call.i);
      if (need(1)) contribute(w, dw, true);
      if (need(2)) contribute(b, db, true);
      return;
    }
    case OpKind::max_pool:
    case OpKind::avg_pool: {
      const int x = in(0), dy = grad(in(1));
      if (dy < 0 || !need(0)) return;
      const Shape sx = shape(x), sy = shape(in(1));
      contribute_new(x, sx, ".pool", [&](int c) {
        if (call.kind == OpKind::max_pool)  // the backward re-finds each window's first max in X
          node(OpKind::max_pool_grad, tag,
               {{x, Access::read, sx}, {dy, Access::read, sy}, {c, Access::write, sx}}, call.i);
        else
          node(OpKind::avg_pool_grad, tag, {{dy, Access::read, sy}, {c, Access::write, sx}}, call.i);
      });
      return;
    }
    case OpKind::add_n: {
      const int k = static_cast<int>(bufs.size()) - 1;
      const int dy = grad(in(k));
      if (dy < 0) return;
      for (int j = 0; j < k; ++j)  // every operand gets dY itself (shared, so never updated in place)
        if (need(j)) contribute(in(j), dy, false);
      return;
    }
    case OpKind::reshape: {
      const int x = in(0), dy = grad(in(1));
      if (dy < 0 || !need(0)) return;
      contribute_new(x, shape(x), ".reshape", [&](int c) {
        node(OpKind::reshape, tag, {{dy, Access::read, shape(in(1))}, {c, Access::write, shape(x)}});
      });
      return;
    }
    case OpKind::embedding: {
      // Buffers idx, T -> Y. Indices are integers: no gradient flows to them.
      const int idx = in(0), table = in(1), dy = grad(in(2));
      if (dy < 0 || !need(1)) return;
      contribute_new(table, shape(table), ".emb", [&](int c) {
        node(OpKind::embedding_grad, tag,
             {{idx, Access::read, shape(idx)}, {dy, Access::read, shape(in(2))}, {c, Access::write, shape(table)}});
      });
      return;
    }
    case OpKind::reduce_sum: {
      const int x = in(0), dy = grad(in(1));
      if (dy < 0 || !need(0)) return;
      contribute_new(x, shape(x), ".rsum", [&](int c) {
        node(OpKind::reduce_sum_grad, tag, {{dy, Access::read, Shape{1}}, {c, Access::write, shape(x)}}, {}, call.f);
      });
      return;
    }
    case OpKind::logistic_xent: {
      const int z = in(0), t = in(1), dl = grad(in(2));
      if (dl < 0 || !need(0)) return;
      contribute_new(z, shape(z), "", [&](int c) {
        node(OpKind::logistic_xent_grad, tag,
             {{z, Access::read, shape(z)}, {t, Access::read, shape(t)}, {dl, Access::read, shape(z)},
              {c, Access::write, shape(z)}});
      });
      return;
    }
    case OpKind::phased_gate: {  // periods and shifts learn (phased_gate.hpp); timestamps are data
      CORUN_CHECK(!need(0), Status::invalid_argument,
                  "backward: phased_gate '" << n.name
                                            << "': its timestamps depend on parameters, but the time gate has no "
                                               "gradient w.r.t. time; pass them as an input");
      const int t = in(0), tau = in(1), s = in(2), dk = grad(in(3));
      if (dk < 0 || (!need(1) && !need(2))) return;
      const int dtau = new_grad_value(shape(tau), "d" + name(tau) + ".gate" + std::to_string(counter_++));
      const int ds = new_grad_value(shape(s), "d" + name(s) + ".gate" + std::to_string(counter_++));
      node(OpKind::phased_gate_grad, tag,
           {{t, Access::read, shape(t)}, {tau, Access::read, shape(tau)}, {s, Access::read, shape(s)},
            {dk, Access::read, shape(in(3))}, {dtau, Access::write, shape(tau)}, {ds, Access::write, shape(s)}},
           call.i, call.f);
      if (need(1)) contribute(tau, dtau, true);
      if (need(2)) contribute(s, ds, true);
      return;
    }
    default:
      detail::fail(Status::invalid_argument, std::string("backward: op '") + codelets::op_info(call.kind).name +
                                                 "' of node '" + n.name + "' has no gradient rule");
  }
}

void Autodiff::run(int loss, const BackwardOptions& options) {
  needs_ = needs_grad();
  CORUN_CHECK(needs_[static_cast<size_t>(loss)], Status::invalid_argument,
              "backward: loss '" << name(loss) << "' does not depend on any parameter");
  g_.grad_of[static_cast<size_t>(loss)] = constant(Shape{1}, 1.0f, "d" + name(loss));
  const size_t forward_nodes = g_.nodes.size();
  for (size_t k = forward_nodes; k-- > 0;) {
    const detail::Node n = g_.nodes[k];  // copy: visit() appends to g_.nodes
    if (!n.is_gradient) visit(n);
  }
  if (!options.sgd_update && options.momentum <= 0.0f) return;
  const size_t nvalues = g_.values.size();
  for (size_t v = 0; v < nvalues; ++v) {
    if (g_.values[v].kind != ValueKind::param) continue;
    const int gv = g_.grad_of[v];
    if (gv < 0) continue;  // a parameter the loss does not depend on
    const Shape s = g_.values[v].shape;
    const std::string pname = g_.values[v].name;
    if (options.momentum > 0.0f) {  // the velocity starts at zero (buffers are zero-filled)
      const int vel = g_.add_value(s, pname + ".velocity", ValueKind::state);
      owned_.push_back(false);
      // Without update nodes the velocity is state for an update made elsewhere (Engine::run_replicated's
      // root update), kept in the graph so checkpoints save it like the one solver's.
      if (!options.sgd_update) continue;
      node(OpKind::sgd_momentum, "sgd_momentum." + pname,
           {{static_cast<int>(v), Access::readwrite, s}, {vel, Access::readwrite, s}, {gv, Access::read, s}},
           {codelets::sgd_momentum_encode(options.momentum), 0, 0, 0}, options.learning_rate);
      continue;
    }
    node(OpKind::sgd, "sgd." + pname,
         {{static_cast<int>(v), Access::readwrite, s}, {gv, Access::read, s}}, {}, options.learning_rate);
  }
}

}  // namespace

void Graph::backward(Tensor loss, const BackwardOptions& options) {
  GraphImpl& g = *impl_;
  CORUN_CHECK(loss.valid() && loss.belongs_to(*this), Status::invalid_argument, "backward: the loss is not a tensor of this graph");
  CORUN_CHECK(!g.has_backward, Status::invalid_argument, "backward: already called on this graph (call it once)");
  CORUN_CHECK(!g.fused, Status::invalid_argument,
              "backward: the graph was already fused by fuse_elementwise(); call backward() first, then fuse");
  CORUN_CHECK(!g.grouped, Status::invalid_argument,
              "backward: the graph was already rewritten by group_parallel_ops(); call backward() first, then group");
  CORUN_CHECK(loss.shape() == Shape{1}, Status::invalid_argument,
              "backward: the loss '" << loss.name() << "' must have shape [1], got " << loss.shape().str());
  CORUN_CHECK(!options.sgd_update || options.learning_rate > 0.0f, Status::invalid_argument,
              "backward: learning rate must be positive, got " << options.learning_rate);
  CORUN_CHECK(options.momentum >= 0.0f && options.momentum < 1.0f, Status::invalid_argument,
              "backward: momentum must be in [0, 1), got " << options.momentum);
  Autodiff(g).run(loss.id(), options);
  g.has_backward = true;
  g.values[static_cast<size_t>(loss.id())].kept = true;  // what the user reads after every run
}

}  // namespace corun
