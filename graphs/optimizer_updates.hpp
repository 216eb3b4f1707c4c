// The issue 19 optimizers' update nodes (graphs/optimizer_updates.cpp), for Graph::backward.
#pragma once

#include <corun/graph.hpp>

#include "graphs/ops/backward.hpp"

namespace corun::graphs {

/// True when `o` needs the adam / sgd_wd nodes (adam, adamw, or sgd with weight decay or Nesterov).
bool uses_hyper_updates(const BackwardOptions& o);
/// Throws invalid_argument naming the option that is out of range.
void check_optimizer_options(const BackwardOptions& o);
/// Appends the hyper-parameter tensor, the optimizer state and (sgd_update) the update node per parameter.
void append_hyper_updates(GradContext& ctx, const BackwardOptions& o);

}  // namespace corun::graphs
