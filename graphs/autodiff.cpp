// Reverse-mode autodiff: appends gradient nodes to the same graph, so a training step is one graph.
//
// Nodes are visited in reverse creation order (a reverse topological order). Each visited node's op rule
// (graphs/ops/<op>.cpp, through graphs/ops/backward.hpp) turns the gradients of its outputs into
// contributions to the gradients of its inputs. Contributions to one value are summed in the order they are
// produced, which is fixed by the graph, so the result never depends on timing or policy. A weight gradient
// that gets many matmul contributions (an LSTM weight over timesteps) is accumulated in place (C += A*B,
// one RW chain), never through one temporary per timestep, and its A^T B contributions are stacked into
// products of BackwardOptions::stack_weight_gradient_rows rows (GradContext::contribute_matmul); the input
// gradients dA = dC W^T of a W many products read use one transposed copy of W
// (BackwardOptions::transpose_reused_weight_uses).
#include <corun/graph.hpp>

#include "codelets/sgd_momentum/sgd_momentum.hpp"
#include "base/check.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"
#include "graphs/optimizer_updates.hpp"

#include <algorithm>

namespace corun {

using codelets::Access;
using codelets::OpKind;
using detail::GraphImpl;

namespace {

// A value that needs a gradient: a parameter, or anything computed from one.
std::vector<bool> needs_grad(const GraphImpl& g) {
  std::vector<bool> needs(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) needs[v] = g.values[v].kind == ValueKind::param;
  for (const auto& n : g.nodes) {
    bool any = false;
    for (size_t b = 0; b < n.buffers.size(); ++b)
      if (n.call.modes[b] == Access::read && needs[static_cast<size_t>(n.buffers[b])]) any = true;
    if (!any) continue;
    for (size_t b = 0; b < n.buffers.size(); ++b)
      if (n.call.modes[b] != Access::read) needs[static_cast<size_t>(n.buffers[b])] = true;
  }
  return needs;
}

// Each visited node's op rule (graphs/ops/<op>.cpp) turns its outputs' gradients into contributions.
void visit(graphs::GradContext& ctx, const detail::Node& n) {
  const graphs::OpRules* rules = graphs::op_rules(n.call.kind);
  if (rules == nullptr || rules->backward == nullptr)
    detail::fail(Status::invalid_argument, std::string("backward: op '") + codelets::op_info(n.call.kind).name +
                                               "' of node '" + n.name + "' has no gradient rule");
  ctx.visit(n);
  rules->backward(ctx);
}

void run(GraphImpl& g, int loss, const BackwardOptions& options) {
  graphs::GradContext ctx(g, needs_grad(g));
  ctx.set_stack_rows(options.stack_weight_gradient_rows);
  ctx.set_transpose_reused(options.transpose_reused_weight_uses);
  CORUN_CHECK(ctx.needs(loss), Status::invalid_argument,
              "backward: loss '" << ctx.name(loss) << "' does not depend on any parameter");
  g.grad_of[static_cast<size_t>(loss)] = ctx.constant(Shape{1}, 1.0f, "d" + ctx.name(loss));
  const size_t forward_nodes = g.nodes.size();
  for (size_t k = forward_nodes; k-- > 0;) {
    const detail::Node n = g.nodes[k];  // copy: the rules append to g.nodes
    if (!n.is_gradient) visit(ctx, n);
  }
  ctx.flush_stacked();
  if (graphs::uses_hyper_updates(options)) return graphs::append_hyper_updates(ctx, options);
  if (!options.sgd_update && options.momentum <= 0.0f) return;
  const size_t nvalues = g.values.size();
  for (size_t v = 0; v < nvalues; ++v) {
    if (g.values[v].kind != ValueKind::param) continue;
    const int gv = g.grad_of[v];
    if (gv < 0) continue;  // a parameter the loss does not depend on
    const Shape s = g.values[v].shape;
    const std::string pname = g.values[v].name;
    if (options.momentum > 0.0f) {  // the velocity starts at zero (buffers are zero-filled)
      const int vel = g.add_value(s, pname + ".velocity", ValueKind::state);
      ctx.track_value();
      // Without update nodes the velocity is state for an update made elsewhere (Engine::run_replicated's
      // root update), kept in the graph so checkpoints save it like the one solver's.
      if (!options.sgd_update) continue;
      ctx.add_node(OpKind::sgd_momentum, "sgd_momentum." + pname,
                   {{static_cast<int>(v), Access::readwrite, s}, {vel, Access::readwrite, s}, {gv, Access::read, s}},
                   {codelets::sgd_momentum_encode(options.momentum), 0, 0, 0}, options.learning_rate);
      continue;
    }
    ctx.add_node(OpKind::sgd, "sgd." + pname, {{static_cast<int>(v), Access::readwrite, s}, {gv, Access::read, s}},
                 {}, options.learning_rate);
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
  CORUN_CHECK(!g.activations_fused, Status::invalid_argument,
              "backward: fuse_conv_activation() made activations part of convolutions, which have no gradient that "
              "way; it is for inference graphs (differentiate a graph built without it)");
  CORUN_CHECK(!g.layouts_blocked, Status::invalid_argument,
              "backward: block_layouts() already chose the layouts of this graph's tensors, before its gradients "
              "existed; call backward() first, then block_layouts()");
  CORUN_CHECK(loss.shape() == Shape{1}, Status::invalid_argument,
              "backward: the loss '" << loss.name() << "' must have shape [1], got " << loss.shape().str());
  CORUN_CHECK(!options.sgd_update || options.learning_rate > 0.0f, Status::invalid_argument,
              "backward: learning rate must be positive, got " << options.learning_rate);
  CORUN_CHECK(options.momentum >= 0.0f && options.momentum < 1.0f, Status::invalid_argument,
              "backward: momentum must be in [0, 1), got " << options.momentum);
  graphs::check_optimizer_options(options);
  CORUN_CHECK(options.stack_weight_gradient_rows >= 0, Status::invalid_argument,
              "backward: stack_weight_gradient_rows must be >= 0 (0: no stacking), got "
                  << options.stack_weight_gradient_rows);
  CORUN_CHECK(options.transpose_reused_weight_uses >= 0, Status::invalid_argument,
              "backward: transpose_reused_weight_uses must be >= 0 (0: never transpose), got "
                  << options.transpose_reused_weight_uses);
  GraphImpl::BackwardCall call{loss.id(), options, g.nodes.size(), g.values.size(), 0, 0,
                               g.values[static_cast<size_t>(loss.id())].kept};
  run(g, loss.id(), options);
  g.has_backward = true;
  g.values[static_cast<size_t>(loss.id())].kept = true;  // what the user reads after every run
  call.nodes = g.nodes.size(), call.values = g.values.size();
  g.backward_call = call;  // a plan-step pass may take the backward off and expand it again (forward_rewrite.hpp)
}

}  // namespace corun
