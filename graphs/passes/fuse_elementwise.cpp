// The elementwise fusion pass (rules in fuse_elementwise.hpp) and Graph::fuse_elementwise.
#include "graphs/passes/fuse_elementwise.hpp"

#include "codelets/ew_chain/ew_chain.hpp"
#include "base/check.hpp"
#include "graphs/graph_impl.hpp"

#include <algorithm>
#include <map>

namespace corun {

using codelets::Access;
using codelets::OpKind;
using detail::GraphImpl;
using detail::Node;

namespace {

// A node the pass may put in a chain: chainable kind, inputs read, one output written, one shape for all.
bool chainable(const Node& n) {
  const int arity = codelets::ew_arity(n.call.kind);
  if (arity == 0 || n.call.nbuffers() != arity + 1) return false;
  for (int b = 0; b <= arity; ++b) {
    if (n.call.modes[static_cast<size_t>(b)] != (b < arity ? Access::read : Access::write)) return false;
    if (n.call.shapes[static_cast<size_t>(b)] != n.call.shapes[0]) return false;  // a bias add broadcasts
  }
  return true;
}

class Fuser {
 public:
  explicit Fuser(GraphImpl& g) : g_(g), members_(g.nodes.size()), root_of_(g.nodes.size(), -1) {
    const size_t nv = g.values.size();
    readers_.assign(nv, 0);
    writers_.assign(nv, {});
    needed_.assign(nv, false);
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const Node& n = g.nodes[k];
      std::vector<int> seen;  // a node reading a value twice (mul(a, a)) is one reader
      for (size_t b = 0; b < n.buffers.size(); ++b) {
        const int v = n.buffers[b];
        if (n.call.modes[b] != Access::read) writers_[static_cast<size_t>(v)].push_back(static_cast<int>(k));
        if (n.call.modes[b] != Access::write && std::find(seen.begin(), seen.end(), v) == seen.end()) {
          seen.push_back(v);
          ++readers_[static_cast<size_t>(v)];
        }
      }
    }
    for (size_t v = 0; v < nv; ++v) {
      const auto& val = g.values[v];
      needed_[v] = needed_[v] || val.kept || (val.kind != ValueKind::activation && val.kind != ValueKind::gradient);
      if (g.grad_of[v] >= 0) needed_[static_cast<size_t>(g.grad_of[v])] = true;
    }
  }

  int run() {
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      if (!chainable(g_.nodes[k])) continue;
      members_[k] = {static_cast<int>(k)};
      root_of_[k] = static_cast<int>(k);
      const Node& n = g_.nodes[k];
      for (size_t b = 0; b + 1 < n.buffers.size(); ++b) absorb(static_cast<int>(k), n.buffers[b]);
    }
    return rebuild();
  }

 private:
  // Merges the group producing `v` into the group rooted at node k when v may disappear.
  void absorb(int k, int v) {
    const size_t vi = static_cast<size_t>(v);
    if (needed_[vi] || g_.values[vi].fused_away || readers_[vi] != 1 || writers_[vi].size() != 1) return;
    const int p = writers_[vi][0];
    if (p >= k || root_of_[static_cast<size_t>(p)] != p) return;  // not a chainable group's root
    if (g_.values[vi].shape != g_.nodes[static_cast<size_t>(k)].call.shapes[0]) return;
    auto& mine = members_[static_cast<size_t>(k)];
    auto& theirs = members_[static_cast<size_t>(p)];
    if (mine.size() + theirs.size() > static_cast<size_t>(codelets::kMaxEwInstructions)) return;
    // Member m's reads move from position m to k: no write of what it reads may lie in between.
    for (int m : theirs)
      for (int x : external_inputs(theirs, m))
        for (int w : writers_[static_cast<size_t>(x)])
          if (w > m && w < k) return;
    for (int m : theirs) root_of_[static_cast<size_t>(m)] = k;
    mine.insert(mine.end(), theirs.begin(), theirs.end());
    theirs.clear();
    removed_.push_back(v);
  }

  // Values member m reads that no member of `group` produces.
  std::vector<int> external_inputs(const std::vector<int>& group, int m) const {
    std::vector<int> r;
    const Node& n = g_.nodes[static_cast<size_t>(m)];
    for (size_t b = 0; b + 1 < n.buffers.size(); ++b) {
      const auto& w = writers_[static_cast<size_t>(n.buffers[b])];
      const bool inside = w.size() == 1 && std::find(group.begin(), group.end(), w[0]) != group.end();
      if (!inside) r.push_back(n.buffers[b]);
    }
    return r;
  }

  // One ew_chain node for a group (members in creation order, the root last).
  Node make_chain(std::vector<int> group) const {
    std::sort(group.begin(), group.end());
    std::map<int, int> result_of;  // value -> index of the instruction producing it
    for (size_t k = 0; k < group.size(); ++k)
      result_of[g_.nodes[static_cast<size_t>(group[k])].buffers.back()] = static_cast<int>(k);
    std::vector<int> inputs;  // external inputs, in order of first use
    for (int m : group) {
      const Node& n = g_.nodes[static_cast<size_t>(m)];
      for (size_t b = 0; b + 1 < n.buffers.size(); ++b)
        if (!result_of.count(n.buffers[b]) && std::find(inputs.begin(), inputs.end(), n.buffers[b]) == inputs.end())
          inputs.push_back(n.buffers[b]);
    }
    const int n_in = static_cast<int>(inputs.size());
    const Node& root = g_.nodes[static_cast<size_t>(group.back())];
    Node chain;
    chain.name = "ew_chain." + root.name;
    chain.is_gradient = root.is_gradient;
    chain.call.kind = OpKind::ew_chain;
    for (int m : group) {
      const Node& n = g_.nodes[static_cast<size_t>(m)];
      chain.call.program.push_back(static_cast<int32_t>(n.call.kind));
      for (size_t b = 0; b < 2; ++b) {
        if (b + 1 >= n.buffers.size()) {
          chain.call.program.push_back(-1);
          continue;
        }
        const int v = n.buffers[b];
        auto it = result_of.find(v);
        const auto input = std::find(inputs.begin(), inputs.end(), v) - inputs.begin();
        chain.call.program.push_back(static_cast<int32_t>(it != result_of.end() ? n_in + it->second : input));
      }
    }
    inputs.push_back(root.buffers.back());
    for (size_t b = 0; b < inputs.size(); ++b) {
      chain.buffers.push_back(inputs[b]);
      chain.call.shapes.push_back(root.call.shapes[0]);
      chain.call.modes.push_back(b + 1 < inputs.size() ? Access::read : Access::write);
    }
    codelets::check_ew_program(chain.call);  // a malformed program here is a bug of this pass
    return chain;
  }

  int rebuild() {
    if (removed_.empty()) return 0;
    std::vector<Node> out;
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      if (root_of_[k] >= 0 && root_of_[k] != static_cast<int>(k)) continue;  // absorbed by a later root
      out.push_back(members_[k].size() > 1 ? make_chain(members_[k]) : g_.nodes[k]);
    }
    const int removed_nodes = static_cast<int>(g_.nodes.size() - out.size());
    g_.nodes = std::move(out);
    for (int v : removed_) {
      auto& val = g_.values[static_cast<size_t>(v)];
      val.fused_away = true;
      val.data = detail::HostBuffer(0);  // the memory is what a removed intermediate costs
    }
    g_.recompute_producers();  // node indices changed
    return removed_nodes;
  }

  GraphImpl& g_;
  std::vector<int> readers_;               // distinct reader nodes per value
  std::vector<std::vector<int>> writers_;  // writer nodes per value, ascending
  std::vector<bool> needed_;               // must survive: kept, a leaf, the loss or a grad() result
  std::vector<std::vector<int>> members_;  // per root node: its group (empty for non-roots)
  std::vector<int> root_of_;               // per chainable node: its group's root
  std::vector<int> removed_;               // intermediates to drop
};

}  // namespace

namespace passes {
int fuse_elementwise(GraphImpl& g) { return Fuser(g).run(); }
}  // namespace passes

int Graph::fuse_elementwise() {
  GraphImpl& g = *impl_;
  CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
              "fuse_elementwise: the graph is bound to an Engine; fuse before the first Engine::run (or after "
              "Engine::release)");
  const int removed = passes::fuse_elementwise(g);
  g.fused = true;
  return removed;
}

}  // namespace corun
