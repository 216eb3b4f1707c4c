// The parallel-op grouping pass (rules in group_parallel_ops.hpp) and Graph::group_parallel_ops.
#include "graphs/passes/group_parallel_ops.hpp"

#include "codelets/group/group.hpp"
#include "base/check.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/passes/levels.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace corun {

using codelets::Access;
using codelets::OpKind;
using detail::GraphImpl;
using detail::Node;

namespace passes {

const char* pattern_name(GroupPattern p) {
  switch (p) {
    case GroupPattern::fan_out: return "fan-out";
    case GroupPattern::fan_in: return "fan-in";
    case GroupPattern::between: return "between";
  }
  return "?";
}

// The groupable column of codelets/ops.def: kernels that use only their buffers and the stack (OpenBLAS
// pinned to one thread for matmul) and give the same bits at every width, so they are safe side by side in
// one task. conv2d and its gradients also use a column buffer, but it is thread_local and a member runs
// start to end on one thread (group.hpp), so members never share it; cblas_sgemm is reentrant.
bool whitelisted(OpKind kind) { return codelets::op_info(kind).groupable; }

}  // namespace passes

namespace {

using passes::GroupPattern;

struct Candidate {
  OpKind kind;
  GroupPattern pattern;
  std::vector<int> nodes;  // ascending
};

class Grouper {
 public:
  Grouper(GraphImpl& g, const passes::ParallelOpOptions& o, const passes::AcceptGroup& accept)
      : g_(g), opts_(o), accept_(accept), deps_(graphs::dependencies(g)), group_of_(g.nodes.size(), -1) {
    readers_.assign(g.values.size(), {});
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const Node& n = g.nodes[k];
      for (size_t b = 0; b < n.buffers.size(); ++b)
        if (n.call.modes[b] != Access::write) add_unique(readers_[static_cast<size_t>(n.buffers[b])], static_cast<int>(k));
    }
  }

  std::vector<passes::OpGroup> run() {
    for (const Candidate& c : candidates()) take(c);
    if (groups_.empty()) return {};
    rebuild();
    return report_;
  }

 private:
  static void add_unique(std::vector<int>& v, int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  }

  bool eligible(int k) const {
    const Node& n = g_.nodes[static_cast<size_t>(k)];
    return passes::whitelisted(n.call.kind) && n.call.nbuffers() <= codelets::kMaxGroupMemberBuffers;
  }
  std::vector<int> written(int k) const {
    const Node& n = g_.nodes[static_cast<size_t>(k)];
    std::vector<int> out;
    for (size_t b = 0; b < n.buffers.size(); ++b)
      if (n.call.modes[b] != Access::read) add_unique(out, n.buffers[b]);
    return out;
  }
  // Eligible readers of any value node x writes, by kind.
  std::map<OpKind, std::vector<int>> children(int x) const {
    std::map<OpKind, std::vector<int>> out;
    for (int v : written(x))
      for (int r : readers_[static_cast<size_t>(v)])
        if (r != x && eligible(r)) add_unique(out[g_.nodes[static_cast<size_t>(r)].call.kind], r);
    return out;
  }
  // Nodes that read a value node m writes.
  std::vector<int> consumers(int m) const {
    std::vector<int> out;
    for (int v : written(m))
      for (int r : readers_[static_cast<size_t>(v)])
        if (r != m) add_unique(out, r);
    return out;
  }

  // Every group of siblings worth trying, the strongest pattern first, then the largest.
  std::vector<Candidate> candidates() const {
    std::vector<Candidate> between, fan_in, fan_out;
    std::map<std::pair<int, OpKind>, std::vector<int>> parents;  // (consumer Y, kind) -> members
    const int n = static_cast<int>(g_.nodes.size());
    for (int x = 0; x < n; ++x) {
      for (auto& [kind, kids] : children(x)) {
        std::map<int, std::vector<int>> by_consumer;
        for (int m : kids)
          for (int y : consumers(m)) by_consumer[y].push_back(m);
        for (auto& [y, members] : by_consumer)
          if (static_cast<int>(members.size()) >= opts_.min_size) between.push_back({kind, GroupPattern::between, members});
        if (static_cast<int>(kids.size()) >= opts_.min_size) fan_out.push_back({kind, GroupPattern::fan_out, kids});
      }
      if (eligible(x))
        for (int y : consumers(x)) parents[{y, g_.nodes[static_cast<size_t>(x)].call.kind}].push_back(x);
    }
    for (auto& [key, members] : parents)
      if (static_cast<int>(members.size()) >= opts_.min_size) fan_in.push_back({key.second, GroupPattern::fan_in, members});
    std::vector<Candidate> all;
    for (auto* list : {&between, &fan_in, &fan_out}) {
      std::stable_sort(list->begin(), list->end(),
                       [](const Candidate& a, const Candidate& b) { return a.nodes.size() > b.nodes.size(); });
      for (Candidate& c : *list) {
        std::sort(c.nodes.begin(), c.nodes.end());
        all.push_back(std::move(c));
      }
    }
    return all;
  }

  // Do nodes a and b touch a common value with at least one of them writing it (a StarPU dependency)?
  bool conflict(int a, int b) const {
    const Node& na = g_.nodes[static_cast<size_t>(a)];
    const Node& nb = g_.nodes[static_cast<size_t>(b)];
    for (size_t i = 0; i < na.buffers.size(); ++i)
      for (size_t j = 0; j < nb.buffers.size(); ++j)
        if (na.buffers[i] == nb.buffers[j] && (na.call.modes[i] != Access::read || nb.call.modes[j] != Access::read))
          return true;
    return false;
  }

  void take(const Candidate& c) {
    // Pairwise independent, in creation order: skip a node some chosen member reaches in the DAG. Edges
    // point forward in creation order, so the search stops at the last candidate.
    const int last = c.nodes.back();
    std::vector<char> reached(static_cast<size_t>(last) + 1, 0);
    std::vector<int> chosen, stack;
    for (int k : c.nodes) {
      if (group_of_[static_cast<size_t>(k)] >= 0 || reached[static_cast<size_t>(k)]) continue;
      chosen.push_back(k);
      stack.assign(1, k);
      while (!stack.empty()) {
        const int u = stack.back();
        stack.pop_back();
        for (int s : deps_.successors[static_cast<size_t>(u)])
          if (s <= last && !reached[static_cast<size_t>(s)]) reached[static_cast<size_t>(s)] = 1, stack.push_back(s);
      }
    }
    // The group runs at its last member's position (members sink) or its first one's (members hoist),
    // whichever keeps more members; members that cannot move there are dropped.
    std::vector<int> sink = movable(chosen, true), hoist = movable(chosen, false);
    if (!order_kept(sink, sink.empty() ? -1 : sink.back())) sink.clear();
    if (!order_kept(hoist, hoist.empty() ? -1 : hoist.front())) hoist.clear();
    const bool use_sink = sink.size() >= hoist.size();
    const std::vector<int>& members = use_sink ? sink : hoist;
    if (static_cast<int>(members.size()) < opts_.min_size) return;
    if (accept_) {
      std::vector<const codelets::OpCall*> calls;
      for (int k : members) calls.push_back(&g_.nodes[static_cast<size_t>(k)].call);
      if (!accept_(calls)) return;
    }
    const int id = static_cast<int>(groups_.size());
    for (int k : members) group_of_[static_cast<size_t>(k)] = id;
    groups_.push_back(members);
    at_.push_back(use_sink ? members.back() : members.front());
    passes::OpGroup r{c.kind, c.pattern, {}};
    for (int k : members) r.members.push_back(g_.nodes[static_cast<size_t>(k)].name);
    report_.push_back(std::move(r));
  }

  // The members of `chosen` that can move to its last (sink) or first member's position without passing
  // a node they conflict with, dropping blocked members until the rest is stable.
  std::vector<int> movable(std::vector<int> chosen, bool sink) const {
    for (bool changed = true; changed && chosen.size() >= 2;) {
      changed = false;
      const int at = sink ? chosen.back() : chosen.front();
      for (size_t i = 0; i < chosen.size(); ++i) {
        const int m = chosen[i];
        const int lo = std::min(m, at), hi = std::max(m, at);
        bool blocked = false;
        for (int j = lo + 1; j < hi && !blocked; ++j)
          blocked = std::find(chosen.begin(), chosen.end(), j) == chosen.end() && conflict(m, j);
        if (blocked) {
          chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
          changed = true;
          break;
        }
      }
    }
    return chosen.size() >= 2 ? chosen : std::vector<int>{};
  }

  // Safety net over all groups taken so far plus this one placed at `at`: every dependency edge of the
  // original graph still points forward in the rewritten order (two moved nodes can swap without either
  // passing the other's original position, which the local checks alone would miss).
  bool order_kept(const std::vector<int>& members, int at) const {
    if (members.empty()) return false;
    auto pos = [&](int k) {
      if (std::find(members.begin(), members.end(), k) != members.end()) return at;
      const int grp = group_of_[static_cast<size_t>(k)];
      return grp < 0 ? k : at_[static_cast<size_t>(grp)];
    };
    for (size_t u = 0; u < deps_.successors.size(); ++u)
      for (int v : deps_.successors[u])
        if (pos(static_cast<int>(u)) >= pos(v)) return false;
    return true;
  }

  Node make_group(const std::vector<int>& members) const {
    Node out;
    const Node& first = g_.nodes[static_cast<size_t>(members.front())];
    out.name = "group." + first.name + ".x" + std::to_string(members.size());
    out.is_gradient = first.is_gradient;
    out.call.kind = OpKind::group;
    for (int k : members) {
      const Node& n = g_.nodes[static_cast<size_t>(k)];
      for (size_t b = 0; b < n.buffers.size(); ++b) {
        const int v = n.buffers[b];
        const auto at = std::find(out.buffers.begin(), out.buffers.end(), v) - out.buffers.begin();
        if (at == static_cast<std::ptrdiff_t>(out.buffers.size())) {
          out.buffers.push_back(v);
          out.call.shapes.push_back(g_.values[static_cast<size_t>(v)].shape);
          out.call.modes.push_back(n.call.modes[b]);
        } else if (n.call.modes[b] != Access::read) {
          out.call.modes[static_cast<size_t>(at)] = n.call.modes[b];  // only one member writes it (independent)
        }
        out.call.program.push_back(static_cast<int32_t>(at));
      }
      out.call.members.push_back(n.call);
    }
    return out;
  }

  void rebuild() {
    std::vector<Node> out;
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      const int grp = group_of_[k];
      if (grp < 0) {
        out.push_back(g_.nodes[k]);
      } else if (at_[static_cast<size_t>(grp)] == static_cast<int>(k)) {
        out.push_back(make_group(groups_[static_cast<size_t>(grp)]));
      }
    }
    g_.nodes = std::move(out);
    g_.recompute_producers();  // node indices changed
  }

  GraphImpl& g_;
  passes::ParallelOpOptions opts_;
  const passes::AcceptGroup& accept_;
  graphs::Dependencies deps_;
  std::vector<std::vector<int>> readers_;  // per value: nodes that read it
  std::vector<int> group_of_;              // per node: its group, -1 if none
  std::vector<std::vector<int>> groups_;   // members per group, ascending
  std::vector<int> at_;                    // per group: the member whose position the group node takes
  std::vector<passes::OpGroup> report_;
};

}  // namespace

namespace passes {
std::vector<OpGroup> group_parallel_ops(GraphImpl& g, const ParallelOpOptions& options, const AcceptGroup& accept) {
  if (!options.enabled) return {};
  CORUN_CHECK(options.min_size >= 2, Status::invalid_argument,
              "group_parallel_ops: the minimum group size must be at least 2, got " << options.min_size);
  // To a fixed point: a group is one node, so the next level of parallel branches (PathNet's 6 ReLUs,
  // each reading one conv of the conv group) now fans out from it and is grouped in the next round.
  std::vector<OpGroup> all;
  for (;;) {
    std::vector<OpGroup> round = Grouper(g, options, accept).run();
    if (round.empty()) return all;
    for (OpGroup& grp : round) all.push_back(std::move(grp));
  }
}
}  // namespace passes

int Graph::group_parallel_ops(int min_size) {
  GraphImpl& g = *impl_;
  CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
              "group_parallel_ops: the graph is bound to an Engine; group before the first Engine::run (or after "
              "Engine::release)");
  const int before = num_nodes();
  passes::group_parallel_ops(g, {.enabled = true, .min_size = min_size});
  g.grouped = true;
  return before - num_nodes();
}

}  // namespace corun
