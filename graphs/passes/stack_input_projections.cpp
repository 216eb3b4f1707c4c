// The input-projection pass: see stack_input_projections.hpp. New nodes are made by the public builders
// (their shape checks and attributes), appended at the end of the node list, then the list is rebuilt with
// each group's stacked GEMM placed right after the last of its inputs' producers and each step's
// replacement at the step's old position; the replacement writes the step's old result value.
#include "graphs/passes/stack_input_projections.hpp"

#include "base/check.hpp"
#include "graphs/graph_impl.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace corun::passes {
namespace {

using codelets::Access;
using codelets::OpKind;
using detail::GraphImpl;

struct Step {
  int concat_node = -1;  ///< the concat form's concat (-1: plain form)
  int matmul_node = -1;
  int x = -1, h = -1, y = -1;  ///< value ids: input part, recurrent part (-1: plain), result
};

struct Candidate {
  ProjectionGroup group;
  int weight = -1;
  std::vector<Step> steps;
};

// Distinct reader nodes and writer nodes per value.
struct Uses {
  std::vector<int> readers, writers, last_writer;
  explicit Uses(const GraphImpl& g)
      : readers(g.values.size(), 0), writers(g.values.size(), 0), last_writer(g.values.size(), -1) {
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const detail::Node& n = g.nodes[k];
      for (size_t b = 0; b < n.buffers.size(); ++b) {
        const auto v = static_cast<size_t>(n.buffers[b]);
        if (n.call.modes[b] != Access::write) ++readers[v];
        if (n.call.modes[b] != Access::read) ++writers[v], last_writer[v] = static_cast<int>(k);
      }
    }
  }
};

// The step a matmul node is, or none: no transposes, no accumulation, a rank-2 input written once.
bool as_step(const GraphImpl& g, const Uses& uses, int k, Step& s, int64_t& in) {
  const detail::Node& n = g.nodes[static_cast<size_t>(k)];
  if (n.call.kind != OpKind::matmul || n.call.i[0] != 0 || n.call.i[1] != 0 || n.call.i[2] != 0) return false;
  const int a = n.buffers[0], y = n.buffers[2];
  if (g.values[static_cast<size_t>(a)].shape.rank != 2 || uses.writers[static_cast<size_t>(y)] != 1) return false;
  s = Step{-1, k, a, -1, y};
  in = g.values[static_cast<size_t>(a)].shape.dims[1];
  const int c = g.values[static_cast<size_t>(a)].producer;
  if (c < 0) return true;
  const detail::Node& cn = g.nodes[static_cast<size_t>(c)];
  // The concat form: A = concat([x, h], axis 1), read by this matmul only and by no user.
  if (cn.call.kind == OpKind::concat && cn.call.i[0] == 1 && cn.buffers.size() == 3 &&
      uses.readers[static_cast<size_t>(a)] == 1 && uses.writers[static_cast<size_t>(a)] == 1 &&
      !g.values[static_cast<size_t>(a)].kept) {
    s.concat_node = c;
    s.x = cn.buffers[0];
    s.h = cn.buffers[1];
    in = g.values[static_cast<size_t>(s.x)].shape.dims[1];
  }
  return true;
}

// Where the group's stacked GEMM goes (after its inputs' and its weight's last writers), or -1 when that is
// later than the group's first step: then an input may depend on the recurrence, or at least is made after it.
int insert_position(const GraphImpl& g, const Uses& uses, const Candidate& c) {
  int after = uses.last_writer[static_cast<size_t>(c.weight)];
  for (const Step& s : c.steps) after = std::max(after, uses.last_writer[static_cast<size_t>(s.x)]);
  const Step& first = c.steps.front();
  const int first_node = first.concat_node >= 0 ? first.concat_node : first.matmul_node;
  (void)g;
  return after + 1 <= first_node ? after + 1 : -1;
}

std::vector<Candidate> find_groups(const GraphImpl& g, int min_steps) {
  const Uses uses(g);
  std::map<std::tuple<int, bool, int64_t, int64_t>, Candidate> by_key;  // (weight, form, rows, in)
  std::vector<std::tuple<int, bool, int64_t, int64_t>> order;
  for (int k = 0; k < static_cast<int>(g.nodes.size()); ++k) {
    Step s;
    int64_t in = 0;
    if (!as_step(g, uses, k, s, in)) continue;
    const int w = g.nodes[static_cast<size_t>(k)].buffers[1];
    const int64_t rows = g.values[static_cast<size_t>(s.x)].shape.dims[0];
    const auto key = std::make_tuple(w, s.h >= 0, rows, in);
    auto [it, fresh] = by_key.try_emplace(key);
    if (fresh) {
      order.push_back(key);
      const Shape& ws = g.values[static_cast<size_t>(w)].shape;
      it->second.weight = w;
      it->second.group = ProjectionGroup{g.values[static_cast<size_t>(w)].name, s.h >= 0, 0, rows, in,
                                         s.h >= 0 ? ws.dims[0] - in : 0, ws.dims[1], k};
    }
    it->second.steps.push_back(s);
  }
  std::vector<Candidate> out;
  for (const auto& key : order) {
    Candidate& c = by_key[key];
    c.group.steps = static_cast<int>(c.steps.size());
    if (c.group.steps < min_steps || insert_position(g, uses, c) < 0) continue;
    c.group.first_node = c.steps.front().concat_node >= 0 ? c.steps.front().concat_node : c.steps.front().matmul_node;
    std::vector<int> producers;
    for (const Step& st : c.steps)
      if (const int p = g.values[static_cast<size_t>(st.x)].producer; p >= 0) producers.push_back(p);
    std::sort(producers.begin(), producers.end());
    c.group.staggered_inputs = std::unique(producers.begin(), producers.end()) - producers.begin() > 1;
    out.push_back(std::move(c));
  }
  return out;
}

// The node `node`'s output buffer `pos` now writes `value`; the value the builder made for it is dropped.
void retarget(GraphImpl& g, int node, size_t pos, int value, std::vector<int>& dropped) {
  int& slot = g.nodes[static_cast<size_t>(node)].buffers[pos];
  dropped.push_back(slot);
  slot = value;
}

}  // namespace

std::vector<ProjectionGroup> stack_input_projections(Graph& graph, const AcceptProjection& accept, int min_steps) {
  GraphImpl& g = graph.impl();
  CORUN_CHECK(!g.has_backward && !g.fused && !g.grouped, Status::invalid_argument,
              "stack_input_projections: run it on the forward graph, before backward(), fuse_elementwise() and "
              "group_parallel_ops() (the autodiff then stacks the backward too)");
  CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
              "stack_input_projections: the graph is bound to an Engine; run the pass before the first Engine::run");
  CORUN_CHECK(min_steps >= 2, Status::invalid_argument, "stack_input_projections: min_steps must be >= 2, got " << min_steps);
  const Uses uses(g);
  std::vector<Candidate> groups = find_groups(g, min_steps);
  std::vector<ProjectionGroup> applied;
  const size_t old_nodes = g.nodes.size();
  std::map<int, std::vector<int>> prefix_at;  // old node index -> new nodes placed before it
  std::map<int, std::vector<int>> replaces;   // old matmul node -> its replacement nodes
  std::vector<bool> removed(old_nodes, false);
  std::vector<int> dropped;  // values nobody writes any more
  for (Candidate& c : groups) {
    if (accept && !accept(c.group)) continue;
    const int at = insert_position(g, uses, c);
    const size_t first_new = g.nodes.size();
    const Tensor w(&g, c.weight);
    const std::string tag = "inproj." + c.group.weight;
    Tensor wx = w, wh;
    if (c.group.concat_form) {
      const auto parts = graph.split(w, 0, {c.group.in, c.group.recurrent}, tag + ".w");
      wx = parts[0], wh = parts[1];
    }
    std::vector<Tensor> xs;
    for (const Step& s : c.steps) xs.push_back(Tensor(&g, s.x));
    const Tensor stacked = graph.concat(xs, 0, tag + ".x");
    const Tensor product = graph.matmul(stacked, wx, false, false, tag + ".mm");
    const auto pieces = graph.split(product, 0, std::vector<int64_t>(c.steps.size(), c.group.rows), tag + ".y");
    const int split_node = static_cast<int>(g.nodes.size()) - 1;
    for (size_t k = first_new; k < g.nodes.size(); ++k) prefix_at[at].push_back(static_cast<int>(k));
    for (size_t t = 0; t < c.steps.size(); ++t) {
      const Step& s = c.steps[t];
      removed[static_cast<size_t>(s.matmul_node)] = true;
      if (!c.group.concat_form) {  // the split writes y_t itself
        retarget(g, split_node, t + 1, s.y, dropped);
        replaces[s.matmul_node];
        continue;
      }
      removed[static_cast<size_t>(s.concat_node)] = true;
      dropped.push_back(g.nodes[static_cast<size_t>(s.concat_node)].buffers[2]);
      const std::string id = g.nodes[static_cast<size_t>(s.matmul_node)].name;
      const Tensor rec = graph.matmul(Tensor(&g, s.h), wh, false, false, id + ".h");
      graph.add(pieces[t], rec, id + ".sum");
      const int add_node = static_cast<int>(g.nodes.size()) - 1;
      retarget(g, add_node, 2, s.y, dropped);
      replaces[s.matmul_node] = {add_node - 1, add_node};
    }
    c.group.first_node = std::min(c.group.first_node, at);
    applied.push_back(c.group);
  }
  if (applied.empty()) return applied;
  std::vector<detail::Node> out;
  out.reserve(g.nodes.size());
  for (size_t k = 0; k < old_nodes; ++k) {
    if (auto it = prefix_at.find(static_cast<int>(k)); it != prefix_at.end())
      for (int n : it->second) out.push_back(g.nodes[static_cast<size_t>(n)]);
    if (auto it = replaces.find(static_cast<int>(k)); it != replaces.end()) {
      for (int n : it->second) out.push_back(g.nodes[static_cast<size_t>(n)]);
      continue;
    }
    if (!removed[k]) out.push_back(g.nodes[k]);
  }
  g.nodes = std::move(out);
  for (int v : dropped) {  // no node touches them any more: no buffer, no handle (as fuse_elementwise's)
    detail::Value& val = g.values[static_cast<size_t>(v)];
    val.fused_away = true;
    val.data = detail::HostBuffer(0);
  }
  g.recompute_producers();
  return applied;
}

}  // namespace corun::passes
