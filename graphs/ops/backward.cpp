// The autodiff's services to the ops' backward rules (graphs/ops/backward.hpp).
#include "graphs/ops/backward.hpp"

#include <algorithm>
#include <utility>

namespace corun::graphs {

using codelets::Access;
using codelets::OpCall;
using codelets::OpKind;

GradContext::GradContext(detail::GraphImpl& g, std::vector<bool> needs)
    : g_(g), owned_(g.values.size(), false), needs_(std::move(needs)) {}

void GradContext::visit(const detail::Node& node) {
  node_ = &node;
  tag_ = "grad." + node.name;
}

int GradContext::new_grad_value(const Shape& shape, const std::string& name) {
  const int v = g_.add_value(shape, name, ValueKind::gradient);
  owned_.push_back(false);
  return v;
}

int GradContext::constant(const Shape& shape, float fill, const std::string& name) {
  const int v = g_.add_value(shape, name, ValueKind::constant);
  owned_.push_back(false);
  std::fill_n(g_.values.back().data.get(), shape.numel(), fill);
  return v;
}

void GradContext::add_node(OpKind kind, const std::string& name, const std::vector<Buf>& bufs,
                           std::array<int64_t, codelets::kMaxIntAttrs> iattr, float fattr) {
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

void GradContext::contribute(int v, int c, bool exclusive) {
  flush_stacked(v);  // contributions are summed in the order they are made
  const int gv = g_.grad_of[static_cast<size_t>(v)];
  if (gv < 0) {
    g_.grad_of[static_cast<size_t>(v)] = c;
    owned_[static_cast<size_t>(c)] = exclusive;
    return;
  }
  const int sum = new_grad_value(shape(v), "d" + name(v) + ".acc" + std::to_string(counter_++));
  add_node(OpKind::add, "grad_acc." + name(v) + "." + std::to_string(counter_),
           {{gv, Access::read, shape(v)}, {c, Access::read, shape(v)}, {sum, Access::write, shape(v)}});
  g_.grad_of[static_cast<size_t>(v)] = sum;
  owned_[static_cast<size_t>(sum)] = true;
}

void GradContext::set_transpose_reused(int64_t min_uses) {
  transpose_reused_.assign(g_.values.size(), false);
  if (min_uses <= 0) return;
  std::vector<int64_t> uses(g_.values.size(), 0);
  for (const detail::Node& n : g_.nodes)
    if (n.call.kind == OpKind::matmul && n.call.i[1] == 0 && n.call.i[2] == 0 && !n.is_gradient)
      ++uses[static_cast<size_t>(n.buffers[1])];
  for (size_t v = 0; v < uses.size(); ++v) transpose_reused_[v] = uses[v] >= min_uses;
}

int GradContext::transposed(int b) {
  const auto it = transposed_.find(b);
  if (it != transposed_.end()) return it->second;
  const Shape sb = shape(b);
  const Shape st{sb[1], sb[0]};
  const int t = new_grad_value(st, name(b) + ".T");
  add_node(OpKind::transpose, "grad_transpose." + name(b), {{b, Access::read, sb}, {t, Access::write, st}},
           {1, 0, 0, 0});
  transposed_.emplace(b, t);
  return t;
}

void GradContext::contribute_matmul(int v, int a, bool ta, int b, bool tb) {
  // dA = dC B^T with a B many products read (an RNN weight): one transposed copy of B serves them all, and
  // each becomes an untransposed product, the faster kernel (BackwardOptions::transpose_reused_weight_uses).
  if (!ta && tb && static_cast<size_t>(b) < transpose_reused_.size() && transpose_reused_[static_cast<size_t>(b)] &&
      shape(b).rank == 2) {
    b = transposed(b);
    tb = false;
  }
  // Held only for parameters: nothing reads a parameter's gradient before the backward ends, while an
  // activation's gradient is read when its producer is visited.
  const Shape sa = shape(a), sb = shape(b);
  constexpr size_t kMaxHeld = 32;  // operands of one concat
  if (stack_rows_ > 0 && ta && !tb && g_.values[static_cast<size_t>(v)].kind == ValueKind::param &&
      sa.rank == 2 && sb.rank == 2 && sa[0] == sb[0] && sa[0] < stack_rows_) {
    Held& h = held_[v];
    h.ab.emplace_back(a, b);
    h.rows += sa[0];
    if (h.rows >= stack_rows_ || h.ab.size() >= kMaxHeld) flush_stacked(v);
    return;
  }
  flush_stacked(v);
  emit_matmul(v, a, ta, b, tb);
}

void GradContext::flush_stacked() {
  while (!held_.empty()) flush_stacked(held_.begin()->first);  // by value id: a fixed order
}

void GradContext::flush_stacked(int v) {
  const auto it = held_.find(v);
  if (it == held_.end()) return;
  const std::vector<std::pair<int, int>> ab = std::move(it->second.ab);
  const int64_t rows = it->second.rows;
  held_.erase(it);
  if (ab.size() == 1) return emit_matmul(v, ab[0].first, true, ab[0].second, false);
  // concat_0 of the A_t and of the dC_t, then one product over all their rows.
  const std::string id = std::to_string(counter_++);
  auto stack = [&](bool second, const char* what) {
    const Shape s0 = shape(second ? ab[0].second : ab[0].first);
    const Shape stacked{rows, s0[1]};
    const int out = new_grad_value(stacked, "d" + name(v) + "." + what + id);
    std::vector<Buf> bufs;
    for (const auto& [a, b] : ab) bufs.push_back({second ? b : a, Access::read, shape(second ? b : a)});
    bufs.push_back({out, Access::write, stacked});
    add_node(OpKind::concat, "grad_stack." + name(v) + "." + what + id, bufs, {0, 0, 0, 0});
    return out;
  };
  const int a = stack(false, "a");
  const int b = stack(true, "b");
  emit_matmul(v, a, true, b, false);
}

void GradContext::emit_matmul(int v, int a, bool ta, int b, bool tb) {
  const Shape sv = shape(v);
  const int gv = g_.grad_of[static_cast<size_t>(v)];
  const bool in_place = gv >= 0 && owned_[static_cast<size_t>(gv)];
  int dst = in_place ? gv : new_grad_value(sv, "d" + name(v) + ".mm" + std::to_string(counter_++));
  add_node(OpKind::matmul, "grad_mm." + name(v) + "." + std::to_string(counter_++),
           {{a, Access::read, shape(a)},
            {b, Access::read, shape(b)},
            {dst, in_place ? Access::readwrite : Access::write, sv}},
           {ta, tb, in_place ? 1 : 0, 0});
  if (!in_place) contribute(v, dst, true);
}

void GradContext::unary_elementwise(OpKind grad_kind, bool from_output) {
  const int x = in(0), y = in(1), dy = grad(y);
  if (dy < 0 || !need(0)) return;
  const Shape s = shape(x);
  const int first = from_output ? y : x;
  contribute_new(x, s, "", [&](int c) {
    add_node(grad_kind, tag_, {{first, Access::read, s}, {dy, Access::read, s}, {c, Access::write, s}}, call().i,
             call().f);
  });
}

void GradContext::dx_from_dy(OpKind grad_kind, const std::string& what) {
  const int x = in(0), y = in(1), dy = grad(y);
  if (dy < 0 || !need(0)) return;
  const Shape sx = shape(x), sy = shape(y);
  contribute_new(x, sx, what, [&](int c) {
    add_node(grad_kind, tag_, {{dy, Access::read, sy}, {c, Access::write, sx}}, call().i, call().f);
  });
}

}  // namespace corun::graphs
