#include "graphs/passes/levels.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>

namespace corun::graphs {

namespace {
void add_edge(Dependencies& d, int32_t from, int32_t to) {
  if (from < 0 || from == to) return;
  d.successors[static_cast<size_t>(from)].push_back(to);
  d.predecessors[static_cast<size_t>(to)].push_back(from);
}

void sort_unique(std::vector<int32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}
}  // namespace

Dependencies dependencies(const detail::GraphImpl& graph) {
  const size_t n = graph.nodes.size();
  Dependencies d;
  d.successors.resize(n);
  d.predecessors.resize(n);
  // Per value: the last node that wrote it and the nodes that read it since.
  std::vector<int32_t> last_writer(graph.values.size(), -1);
  std::vector<std::vector<int32_t>> readers(graph.values.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& node = graph.nodes[i];
    const auto me = static_cast<int32_t>(i);
    for (size_t b = 0; b < node.buffers.size(); ++b) {
      const auto v = static_cast<size_t>(node.buffers[b]);
      const codelets::Access mode = node.call.modes[b];
      if (mode == codelets::Access::read) {
        add_edge(d, last_writer[v], me);  // read after write
        readers[v].push_back(me);
        continue;
      }
      if (mode == codelets::Access::readwrite) add_edge(d, last_writer[v], me);
      if (readers[v].empty()) {
        add_edge(d, last_writer[v], me);  // write after write
      } else {
        for (int32_t r : readers[v]) add_edge(d, r, me);  // write after read (orders after the writer too)
        readers[v].clear();
      }
      last_writer[v] = me;
    }
  }
  for (auto& s : d.successors) sort_unique(s);
  for (auto& p : d.predecessors) sort_unique(p);
  return d;
}

Levels levels(const Dependencies& deps, const std::vector<double>& time) {
  const size_t n = deps.successors.size();
  CORUN_CHECK(time.size() == n, Status::invalid_argument,
              "levels: " << time.size() << " times for " << n << " nodes");
  auto t = [&](size_t i) { return std::isnan(time[i]) || time[i] < 0 ? 0.0 : time[i]; };
  Levels r;
  r.level.assign(n, 0.0);
  r.critical.assign(n, 0);
  // Successors always come later in node order (creation order is topological), so one backward sweep.
  for (size_t i = n; i-- > 0;) {
    double best = 0.0;
    for (int32_t s : deps.successors[i]) best = std::max(best, r.level[static_cast<size_t>(s)]);
    r.level[i] = t(i) + best;
    r.total += t(i);
  }
  if (n == 0) return r;
  // The critical path starts at the node with the largest level and follows a successor whose level
  // accounts for the rest.
  size_t cur = static_cast<size_t>(std::max_element(r.level.begin(), r.level.end()) - r.level.begin());
  r.critical_path = r.level[cur];
  for (;;) {
    r.critical[cur] = 1;
    const double rest = r.level[cur] - t(cur);
    int32_t next = -1;
    for (int32_t s : deps.successors[cur])
      if (next < 0 || r.level[static_cast<size_t>(s)] > r.level[static_cast<size_t>(next)]) next = s;
    if (next < 0 || r.level[static_cast<size_t>(next)] < rest - 1e-9 * std::max(1.0, rest)) break;
    cur = static_cast<size_t>(next);
  }
  return r;
}

}  // namespace corun::graphs
