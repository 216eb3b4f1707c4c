// Taking a graph's backward off, rewriting its forward part and expanding the backward again
// (forward_rewrite.hpp has the why).
#include "graphs/passes/forward_rewrite.hpp"

#include "base/check.hpp"
#include "graphs/graph_impl.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <vector>

namespace corun::passes {

using detail::GraphImpl;

std::string why_not_rewrite_forward(const Graph& graph) {
  const GraphImpl& g = graph.impl();
  if (g.bound_engines > 0) return "the graph is bound to an Engine (run the plan step before the first Engine::run)";
  if (g.fused || g.grouped || g.activations_fused || g.layouts_blocked)
    return "the graph was already fused, grouped or given blocked layouts";
  if (!g.has_backward) return "";
  if (!g.backward_call) return "its backward() came from a graph without the record of it";
  if (g.nodes.size() != g.backward_call->nodes || g.values.size() != g.backward_call->values)
    return "nodes or values were added after backward() (the backward could not be expanded again as it was)";
  return "";
}

namespace {

// The optimizer state backward() made, by name, with its contents (a checkpoint may have been loaded into it).
std::map<std::string, std::vector<float>> saved_state(const GraphImpl& g, size_t first) {
  std::map<std::string, std::vector<float>> out;
  for (size_t v = first; v < g.values.size(); ++v) {
    const detail::Value& val = g.values[v];
    if (val.kind != ValueKind::state || val.data.get() == nullptr) continue;
    out[val.name].assign(val.data.get(), val.data.get() + val.shape.numel());
  }
  return out;
}

void restore_state(GraphImpl& g, size_t first, const std::map<std::string, std::vector<float>>& saved) {
  for (size_t v = first; v < g.values.size(); ++v) {
    detail::Value& val = g.values[v];
    const auto it = saved.find(val.name);
    if (val.kind == ValueKind::state && it != saved.end() && static_cast<int64_t>(it->second.size()) == val.shape.numel())
      std::copy(it->second.begin(), it->second.end(), val.data.get());
  }
}

// The learning rate the update nodes run now (Graph::set_learning_rate may have changed backward()'s).
float current_learning_rate(const GraphImpl& g, float recorded) {
  for (const detail::Node& n : g.nodes)
    if (n.call.kind == codelets::OpKind::sgd || n.call.kind == codelets::OpKind::sgd_momentum) return n.call.f;
  return recorded;
}

// Back to the graph backward() was called on: its nodes, values, names and gradient table.
void take_backward_off(GraphImpl& g, const GraphImpl::BackwardCall& call) {
  g.nodes.resize(call.forward_nodes);
  for (auto it = g.by_name.begin(); it != g.by_name.end();)
    it = it->second >= static_cast<int>(call.forward_values) ? g.by_name.erase(it) : std::next(it);
  g.values.erase(g.values.begin() + static_cast<std::ptrdiff_t>(call.forward_values), g.values.end());
  g.grad_of.assign(call.forward_values, -1);
  g.values[static_cast<size_t>(call.loss)].kept = call.loss_was_kept;
  g.has_backward = false;
  g.optimizer_hyper = -1;
  g.hyper_options = BackwardOptions{};
  g.backward_call.reset();
  g.recompute_producers();
}

}  // namespace

int rewrite_forward(Graph& graph, const std::function<int(Graph&)>& rewrite) {
  const std::string why = why_not_rewrite_forward(graph);
  CORUN_CHECK(why.empty(), Status::invalid_argument,
              "the forward graph cannot be rewritten: " << why
                  << "; run the pass on the forward graph before backward(), or build the graph again");
  GraphImpl& g = graph.impl();
  if (!g.has_backward) return rewrite(graph);
  GraphImpl::BackwardCall call = *g.backward_call;
  call.options.learning_rate = current_learning_rate(g, call.options.learning_rate);
  const auto state = saved_state(g, call.forward_values);
  take_backward_off(g, call);
  const int changed = rewrite(graph);
  const size_t first = g.values.size();
  graph.backward(Tensor(&g, call.loss), call.options);
  restore_state(g, first, state);
  return changed;
}

}  // namespace corun::passes
