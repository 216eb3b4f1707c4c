// Graph::dump_dot: ops are boxes (gradient ops grey, fused chains with their program), leaves are ellipses
// (params bold), edges are values.
#include <corun/graph.hpp>

#include "codelets/ew_chain/ew_chain.hpp"
#include "graphs/graph_impl.hpp"

#include <sstream>

namespace corun {

namespace {
std::string quoted(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

// A fused chain shows what it computes.
std::string program(const detail::Node& n) {
  return n.call.kind == codelets::OpKind::ew_chain ? "\n" + codelets::ew_program_str(n.call) : "";
}
}  // namespace

std::string Graph::dump_dot() const {
  const auto& g = *impl_;
  std::ostringstream os;
  os << "digraph corun {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t v = 0; v < g.values.size(); ++v) {
    const auto& val = g.values[v];
    if (val.producer >= 0 || val.kind == ValueKind::activation || val.kind == ValueKind::gradient) continue;
    const char* style = val.kind == ValueKind::param ? "bold" : val.kind == ValueKind::constant ? "dashed" : "solid";
    os << "  v" << v << " [shape=ellipse, style=" << style << ", label=" << quoted(val.name + "\n" + val.shape.str())
       << "];\n";
  }
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const auto& n = g.nodes[k];
    os << "  n" << k << " [shape=box" << (n.is_gradient ? ", style=filled, fillcolor=gray90" : "")
       << ", label=" << quoted(std::string(codelets::op_info(n.call.kind).name) + "\n" + n.name + program(n)) << "];\n";
  }
  // An edge from the last writer of each value read by a node, in submission order.
  std::vector<int> last_writer(g.values.size(), -1);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const auto& n = g.nodes[k];
    for (size_t b = 0; b < n.buffers.size(); ++b) {
      const int v = n.buffers[b];
      if (n.call.modes[b] == codelets::Access::write) continue;
      const int w = last_writer[static_cast<size_t>(v)];
      const auto& val = g.values[static_cast<size_t>(v)];
      os << "  " << (w >= 0 ? "n" + std::to_string(w) : "v" + std::to_string(v)) << " -> n" << k
         << " [label=" << quoted(val.name + " " + val.shape.str()) << "];\n";
    }
    for (size_t b = 0; b < n.buffers.size(); ++b)
      if (n.call.modes[b] != codelets::Access::read) last_writer[static_cast<size_t>(n.buffers[b])] = static_cast<int>(k);
  }
  os << "}\n";
  return os.str();
}

}  // namespace corun
