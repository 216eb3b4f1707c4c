// The checks every inference pass (fold_batch_norm, fuse_conv_activation, block_layouts) makes before it
// rewrites a graph: not bound to an Engine (its handles would point at the old buffers) and no backward()
// (each pass removes or changes what the gradient nodes read).
#pragma once

#include "base/check.hpp"
#include "graphs/graph_impl.hpp"

namespace corun::detail {

/// Throws unless graph `g` may be rewritten by inference pass `pass`. `verb` completes "...; <verb> before the
/// first Engine::run"; `why_not_training` follows "the graph has a backward()" and says what the pass would
/// break there.
inline void check_inference_pass(const GraphImpl& g, const char* pass, const char* verb,
                                 const char* why_not_training) {
  CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
              pass << ": the graph is bound to an Engine; " << verb
                   << " before the first Engine::run (or after Engine::release)");
  CORUN_CHECK(!g.has_backward, Status::invalid_argument,
              pass << ": the graph has a backward()" << why_not_training);
}

}  // namespace corun::detail
