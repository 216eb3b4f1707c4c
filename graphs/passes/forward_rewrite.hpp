// graphs/passes/forward_rewrite.hpp — running a pass that must see the forward graph alone on a graph whose
// backward is already expanded (issue 50 item 2: every pass is a plan-step choice, and the plan step gets the
// graph the program built, backward included).
//
// The input-projection pass rewrites an RNN layer's per-step products into one stacked product; run before
// Graph::backward, the autodiff then stacks the backward too (one dX and one dW product per layer instead of
// one per step). Rewriting the backward nodes by hand would be a second autodiff. Instead the graph remembers
// what backward() was called with and where the forward graph ended (GraphImpl::backward_call): the backward
// nodes and values are taken off, the pass rewrites the forward graph, and backward() runs again with the same
// loss and options. The result is the graph the program would have had with the pass run before backward():
// the same nodes in the same order, the same value ids, the same bits.
//
// What survives: the forward values (ids, names, contents); the optimizer state backward() made (velocities,
// Adam moments, the hyper-parameters: by name, with their contents, e.g. a checkpoint loaded before the plan
// step) and a learning rate set by Graph::set_learning_rate. Tensors of the old backward's values (gradients,
// state) must be fetched again afterwards (Graph::grad, Graph::optimizer_state): their ids are reused.
#pragma once

#include <corun/graph.hpp>

#include <functional>
#include <string>

namespace corun::passes {

/// "" when `graph` can be rewritten by rewrite_forward: a forward graph, or one whose backward() was the last
/// change and that no Engine holds, that was not fused, grouped, or given blocked layouts since; else why not.
std::string why_not_rewrite_forward(const Graph& graph);

/// Runs `rewrite` on the forward part of `graph`: on a graph with backward, the backward is taken off first and
/// expanded again after it with the same loss and options (a rewrite that changed nothing gets the graph it had
/// back). Returns what `rewrite` returned. Throws corun::Error when why_not_rewrite_forward says why not.
int rewrite_forward(Graph& graph, const std::function<int(Graph&)>& rewrite);

}  // namespace corun::passes
