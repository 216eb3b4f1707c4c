// The plan step: the graph passes a Config asks for, run on a graph before it is first bound (or run
// inline). Fusion first, then grouping: the order `corun train` has always run them in.
#include <corun/engine.hpp>

#include "base/check.hpp"
#include "codelets/op.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/passes/fuse_elementwise.hpp"
#include "graphs/passes/group_parallel_ops.hpp"

namespace corun {

GraphPassReport apply_graph_passes(Graph& graph, const Config& config) {
  detail::GraphImpl& g = graph.impl();
  GraphPassReport report;
  report.grouping = config.grouping();
  report.nodes_before = graph.num_nodes();
  // Each pass runs once per graph: the graph's own marks say which already did (also when the user called
  // Graph::fuse_elementwise or Graph::group_parallel_ops). A grouping pass that found nothing leaves no mark,
  // so backward() still works; run again on the same nodes it finds nothing again.
  const bool fuse = config.fuse_elementwise && !g.fused;
  const bool group = report.grouping.enabled && !g.grouped;
  if (fuse || group)
    CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
                "apply_graph_passes: the graph is bound to an Engine; run the passes before the first Engine::run (or "
                "after Engine::release)");
  if (fuse) {
    report.fused_nodes = passes::fuse_elementwise(g);
    g.fused = true;
  }
  if (group) {
    const std::vector<passes::OpGroup> groups =
        passes::group_parallel_ops(g, {.enabled = true, .min_size = report.grouping.min_size});
    if (!groups.empty()) g.grouped = true;
    for (const passes::OpGroup& grp : groups)
      report.groups.push_back({codelets::op_info(grp.kind).name, passes::pattern_name(grp.pattern),
                               static_cast<int>(grp.members.size()), grp.members.front()});
  }
  report.nodes_after = graph.num_nodes();
  return report;
}

}  // namespace corun
