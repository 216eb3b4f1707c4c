// graphs/ops/backward.hpp — the autodiff's services to the ops' backward rules (graphs/ops/<op>.cpp).
//
// The autodiff visits the forward nodes in reverse creation order and calls the op's backward rule with a
// GradContext on that node. A rule reads the gradients of the node's outputs (grad(out)), and for every
// input that needs one (need(k)) adds a contribution: an existing value (contribute), the result of one new
// gradient node (contribute_new) or an in-place matmul accumulation (contribute_matmul). Contributions to
// one value are summed in the order they are made, fixed by the graph, so the result never depends on
// timing or policy.
#pragma once

#include "codelets/op.hpp"
#include "graphs/graph_impl.hpp"

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace corun::graphs {

class GradContext {
 public:
  GradContext(detail::GraphImpl& g, std::vector<bool> needs);

  /// The node being differentiated (set by the autodiff before each rule runs).
  void visit(const detail::Node& node);
  const detail::Node& node() const { return *node_; }
  const codelets::OpCall& call() const { return node_->call; }
  /// "grad.<node name>": the name (or prefix) of the gradient nodes of this node.
  const std::string& tag() const { return tag_; }

  /// Value id of buffer k of the node.
  int in(int k) const { return node_->buffers[static_cast<size_t>(k)]; }
  int nbuffers() const { return static_cast<int>(node_->buffers.size()); }
  /// Whether buffer k's value needs a gradient (a parameter, or computed from one).
  bool need(int k) const { return needs(in(k)); }
  bool needs(int v) const { return needs_[static_cast<size_t>(v)]; }
  /// The gradient of value v so far (-1: none).
  int grad(int v) const { return g_.grad_of[static_cast<size_t>(v)]; }
  /// By value: adding values reallocates the graph's value list, so references would not outlive a node().
  Shape shape(int v) const { return g_.values[static_cast<size_t>(v)].shape; }
  std::string name(int v) const { return g_.values[static_cast<size_t>(v)].name; }
  /// A number for unique value and node names (increments).
  int next_id() { return counter_++; }

  struct Buf {
    int value;
    codelets::Access mode;
    Shape view;
  };
  /// Appends a gradient node; `bufs` in buffer order.
  void add_node(codelets::OpKind kind, const std::string& name, const std::vector<Buf>& bufs,
                std::array<int64_t, codelets::kMaxIntAttrs> iattr = {}, float fattr = 0.0f);
  int new_grad_value(const Shape& shape, const std::string& name);
  int constant(const Shape& shape, float fill, const std::string& name);

  /// Adds value c to grad(v). `exclusive`: c was made for v alone, so later contributions may update it in
  /// place.
  void contribute(int v, int c, bool exclusive);
  /// grad(v) += op(a) * op(b): accumulated in place when grad(v) is exclusively v's. A parameter's
  /// a^T b contributions are held and made as one product of their stacked rows once they reach
  /// stack_rows (BackwardOptions::stack_weight_gradient_rows).
  void contribute_matmul(int v, int a, bool ta, int b, bool tb);
  /// Makes the contributions still held for stacking (the autodiff calls it after the last rule).
  void flush_stacked();
  void set_stack_rows(int64_t rows) { stack_rows_ = rows; }
  /// From now on, dA = dC B^T contributions whose B is read untransposed by at least `min_uses` forward
  /// products read one transposed copy of B instead (BackwardOptions::transpose_reused_weight_uses; 0: off).
  void set_transpose_reused(int64_t min_uses);
  /// A fresh gradient value "d<v><what>" for v, produced by the one node `fill(c)` appends.
  template <class Fill>
  void contribute_new(int v, const Shape& s, const std::string& what, Fill fill) {
    const int c = new_grad_value(s, "d" + name(v) + what);
    fill(c);
    contribute(v, c, true);
  }
  /// The rule of a one-input elementwise op with buffers X -> Y: dX = grad_kind(first, dY) elementwise,
  /// `first` being X (from_output false) or Y; the node's attributes are passed on.
  void unary_elementwise(codelets::OpKind grad_kind, bool from_output);
  /// The rule of an op X -> Y whose gradient needs dY alone: contributes "d<X><what>" = grad_kind(dY), a
  /// node with buffers dY, dX and this node's attributes.
  void dx_from_dy(codelets::OpKind grad_kind, const std::string& what);

  /// The update nodes after the backward (sgd or sgd_momentum per parameter with a gradient).
  detail::GraphImpl& graph() { return g_; }
  /// Marks a value added outside new_grad_value / constant (optimizer state) as not owned.
  void track_value() { owned_.push_back(false); }

 private:
  detail::GraphImpl& g_;
  std::vector<bool> owned_;
  std::vector<bool> needs_;
  const detail::Node* node_ = nullptr;
  std::string tag_;
  int counter_ = 0;
  // Held a^T b contributions per parameter, in the order made, and their rows.
  struct Held {
    std::vector<std::pair<int, int>> ab;
    int64_t rows = 0;
  };
  std::map<int, Held> held_;
  int64_t stack_rows_ = 0;
  // Values to read through a transposed copy (set_transpose_reused), and the copies made so far.
  std::vector<bool> transpose_reused_;
  std::map<int, int> transposed_;

  void flush_stacked(int v);
  int transposed(int b);
  void emit_matmul(int v, int a, bool ta, int b, bool tb);
};

}  // namespace corun::graphs
