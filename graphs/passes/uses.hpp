// How many nodes read and write each value of a graph: what the inference passes (fold_batch_norm,
// fuse_conv_activation) check before they make one node write another's output.
#pragma once

#include "graphs/graph_impl.hpp"

#include <vector>

namespace corun::detail {

struct Uses {
  std::vector<int> readers, writers;  // nodes reading / writing each value

  static Uses of(const GraphImpl& g) {
    Uses u{std::vector<int>(g.values.size(), 0), std::vector<int>(g.values.size(), 0)};
    for (const Node& n : g.nodes)
      for (size_t b = 0; b < n.buffers.size(); ++b) {
        const auto v = static_cast<size_t>(n.buffers[b]);
        if (n.call.modes[b] != codelets::Access::write) ++u.readers[v];
        if (n.call.modes[b] != codelets::Access::read) ++u.writers[v];
      }
    return u;
  }
  int read_by(int value) const { return readers[static_cast<size_t>(value)]; }
  int written_by(int value) const { return writers[static_cast<size_t>(value)]; }
};

}  // namespace corun::detail
