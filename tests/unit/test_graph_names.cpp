// Node and value names, find(), the DOT output, data() and moving a Graph.
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "graphs/graph_impl.hpp"

#include "common/error_matchers.hpp"
#include "graph_test_mlp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Status;
using corun::Tensor;
using corun::ValueKind;
using corun::test::Mlp;

// ------------------------------------------------------------------------------------ names, find, DOT

TEST(GraphNames, UnnamedNodesGetOpAndIndex) {
  Graph g;
  auto a = g.input("a", {2, 2});
  auto b = g.input("b", {2, 2});
  auto m = g.matmul(a, b);             // node 0
  auto s = g.add(m, b);                // node 1
  auto sg = g.sigmoid(s);              // node 2
  auto named = g.tanh(sg, "my_tanh");  // node 3
  auto r = g.relu(named);              // node 4
  EXPECT_EQ(m.name(), "matmul_0");
  EXPECT_EQ(s.name(), "add_1");
  EXPECT_EQ(sg.name(), "sigmoid_2");
  EXPECT_EQ(named.name(), "my_tanh");
  EXPECT_EQ(r.name(), "relu_4");
  const auto& nodes = g.impl().nodes;
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[0].name, "matmul_0");
  EXPECT_EQ(nodes[3].name, "my_tanh");
  EXPECT_EQ(nodes[4].name, "relu_4");
  // Split outputs are "<node>:<k>".
  auto parts = g.split(r, 1, {1, 1});
  EXPECT_EQ(parts[0].name(), "split_5:0");
  EXPECT_EQ(parts[1].name(), "split_5:1");
}

TEST(GraphNames, FindByName) {
  Mlp m;
  EXPECT_EQ(m.g.find("x"), m.x);
  EXPECT_EQ(m.g.find("w"), m.w);
  EXPECT_EQ(m.g.find("h"), m.h);
  EXPECT_EQ(m.g.find("logits"), m.logits);
  EXPECT_EQ(m.g.find("loss"), m.loss);
  EXPECT_EQ(m.g.find("loss").shape(), (Shape{1}));
  Graph g;
  auto a = g.input("a", {2, 2});
  auto unnamed = g.relu(a);
  EXPECT_EQ(g.find("relu_0"), unnamed);
  EXPECT_CORUN_ERROR(g.find("relu_1"), Status::invalid_argument, "'relu_1'");
}

// A second name finds the same value; a name in use (by any value) is refused, and has() says which are.
TEST(GraphNames, AddNameGivesAValueASecondName) {
  Graph g;
  auto a = g.input("a", {2, 2});
  auto r = g.relu(a, "r");
  EXPECT_FALSE(g.has("output"));
  g.add_name(r, "output");
  EXPECT_TRUE(g.has("output"));
  EXPECT_EQ(g.find("output"), r);
  EXPECT_EQ(g.find("r"), r);
  EXPECT_EQ(r.name(), "r");  // the value's own name is unchanged
  EXPECT_CORUN_ERROR(g.add_name(a, "output"), Status::invalid_argument, "'output' already names value 'r'");
  EXPECT_CORUN_ERROR(g.add_name(a, "r"), Status::invalid_argument, "'r' already names value 'r'");
  EXPECT_CORUN_ERROR(g.add_name(a, ""), Status::invalid_argument, "a name is required");
  EXPECT_EQ(g.find("output"), r);
}

// A constant holds its fill, is of kind constant, and is not found by name: a repeated name is not an error.
TEST(GraphNames, ConstantsAreFilledAndNotLookedUp) {
  Graph g;
  auto c = g.constant("k", {2, 3}, 1.5f);
  auto z = g.constant("k", {4});
  EXPECT_EQ(g.kind(c), ValueKind::constant);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.name(), "k");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(g.data(c)[i], 1.5f);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(g.data(z)[i], 0.0f);
  EXPECT_FALSE(g.has("k"));
  EXPECT_TRUE(g.params().empty());
  EXPECT_TRUE(g.inputs().empty());
  g.param("k", {1});  // a constant's name does not reserve it
  EXPECT_CORUN_ERROR(g.constant("x", Shape{}), Status::invalid_argument, "empty shape");
}

// A small DOT reader: statements separated by ';' outside quotes; checks quotes and braces balance and
// returns the declared ids, the labels of declarations and the edges.
struct Dot {
  std::map<std::string, std::string> labels;  // id -> label text (unescaped)
  std::vector<std::pair<std::string, std::string>> edges;
  std::string error;
};

std::string unescape_label(const std::string& stmt) {
  const auto p = stmt.find("label=\"");
  if (p == std::string::npos) return "";
  std::string r;
  for (size_t i = p + 7; i < stmt.size(); ++i) {
    if (stmt[i] == '\\' && i + 1 < stmt.size()) {
      r += stmt[++i];
      continue;
    }
    if (stmt[i] == '"') break;
    r += stmt[i];
  }
  return r;
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\n");
  const auto b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

Dot parse_dot(const std::string& text) {
  Dot d;
  const std::string head = "digraph corun {";
  if (text.rfind(head, 0) != 0) {
    d.error = "does not start with 'digraph corun {'";
    return d;
  }
  const std::string body_end = "}\n";
  if (text.size() < head.size() + 2 || text.compare(text.size() - 2, 2, body_end) != 0) {
    d.error = "does not end with '}\\n'";
    return d;
  }
  const std::string body = text.substr(head.size(), text.size() - head.size() - 2);
  std::vector<std::string> stmts;
  std::string cur;
  bool in_quote = false;
  int brackets = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    cur += c;
    if (in_quote) {
      if (c == '\\' && i + 1 < body.size())
        cur += body[++i];
      else if (c == '"')
        in_quote = false;
      continue;
    }
    if (c == '"')
      in_quote = true;
    else if (c == '[')
      ++brackets;
    else if (c == ']')
      --brackets;
    else if (c == '{' || c == '}') {
      d.error = "unexpected brace outside quotes";
      return d;
    } else if (c == ';') {
      if (brackets != 0) {
        d.error = "';' inside an attribute list";
        return d;
      }
      stmts.push_back(trim(cur.substr(0, cur.size() - 1)));
      cur.clear();
    }
  }
  if (in_quote || brackets != 0) {
    d.error = "unbalanced quotes or brackets";
    return d;
  }
  if (!trim(cur).empty()) {
    d.error = "trailing text without ';': " + trim(cur);
    return d;
  }
  for (const auto& s : stmts) {
    if (s.rfind("rankdir=", 0) == 0 || s.rfind("node [", 0) == 0) continue;
    const auto arrow = s.find(" -> ");
    const auto bracket = s.find(" [");
    if (bracket == std::string::npos || s.back() != ']') {
      d.error = "statement without attributes: " + s;
      return d;
    }
    if (arrow != std::string::npos && arrow < bracket) {
      d.edges.emplace_back(s.substr(0, arrow), s.substr(arrow + 4, bracket - arrow - 4));
    } else {
      const std::string id = s.substr(0, bracket);
      if (d.labels.count(id)) {
        d.error = "id declared twice: " + id;
        return d;
      }
      d.labels[id] = unescape_label(s);
    }
  }
  return d;
}

TEST(GraphDot, ValidAndContainsEveryNode) {
  Mlp m;
  m.g.backward(m.loss);
  const std::string dot = m.g.dump_dot();
  const Dot d = parse_dot(dot);
  ASSERT_TRUE(d.error.empty()) << d.error << "\n" << dot;
  // Every node is declared once, with its name in its label.
  const auto& impl = m.g.impl();
  for (size_t k = 0; k < impl.nodes.size(); ++k) {
    const std::string id = "n" + std::to_string(k);
    ASSERT_TRUE(d.labels.count(id)) << id;
    EXPECT_NE(d.labels.at(id).find(impl.nodes[k].name), std::string::npos) << impl.nodes[k].name;
    EXPECT_NE(dot.find(impl.nodes[k].name), std::string::npos) << impl.nodes[k].name;
  }
  // Leaves: inputs and params are declared with their names.
  for (Tensor p : m.g.params()) {
    const std::string id = "v" + std::to_string(p.id());
    ASSERT_TRUE(d.labels.count(id)) << p.name();
    EXPECT_NE(d.labels.at(id).find(p.name()), std::string::npos);
  }
  for (Tensor x : m.g.inputs()) EXPECT_TRUE(d.labels.count("v" + std::to_string(x.id()))) << x.name();
  // Every edge connects declared ids and points at a node.
  ASSERT_FALSE(d.edges.empty());
  for (const auto& [from, to] : d.edges) {
    EXPECT_TRUE(d.labels.count(from)) << from << " -> " << to;
    EXPECT_TRUE(d.labels.count(to)) << from << " -> " << to;
    EXPECT_EQ(to[0], 'n') << from << " -> " << to;
  }
  // The number of declared op boxes equals the number of nodes.
  int boxes = 0;
  for (const auto& [id, label] : d.labels) boxes += id[0] == 'n';
  EXPECT_EQ(boxes, m.g.num_nodes());
}

TEST(GraphDot, QuotesInNamesAreEscaped) {
  Graph g;
  auto a = g.input("a \"quoted\" \\ name", {2});
  g.relu(a, "r\"elu");
  const std::string dot = g.dump_dot();
  const Dot d = parse_dot(dot);
  ASSERT_TRUE(d.error.empty()) << d.error << "\n" << dot;
  ASSERT_TRUE(d.labels.count("n0"));
  EXPECT_NE(d.labels.at("n0").find("r\"elu"), std::string::npos) << d.labels.at("n0");
  EXPECT_NE(d.labels.at("v0").find("a \"quoted\" \\ name"), std::string::npos) << d.labels.at("v0");
}

TEST(GraphDot, CheckerRejectsBrokenDot) {
  EXPECT_FALSE(parse_dot("graph corun {\n}\n").error.empty());
  EXPECT_FALSE(parse_dot("digraph corun {\n  n0 [label=\"x];\n}\n").error.empty());
  EXPECT_FALSE(parse_dot("digraph corun {\n  n0 [label=\"x\"]\n}\n").error.empty());
  EXPECT_FALSE(parse_dot("digraph corun {\n  n0 [label=\"x\"];\n  n0 [label=\"y\"];\n}\n").error.empty());
  EXPECT_FALSE(parse_dot("digraph corun {\n  n0 [label=\"x\"];\n").error.empty());
  const Dot ok =
      parse_dot("digraph corun {\n  v0 [label=\"a\\\"b\"];\n  n0 [label=\"x\"];\n  v0 -> n0 [label=\"e\"];\n}\n");
  EXPECT_TRUE(ok.error.empty()) << ok.error;
  EXPECT_EQ(ok.labels.at("v0"), "a\"b");
  ASSERT_EQ(ok.edges.size(), 1u);
  EXPECT_EQ(ok.edges[0].first, "v0");
  EXPECT_EQ(ok.edges[0].second, "n0");
}

TEST(GraphDot, EmptyGraph) {
  Graph g;
  const Dot d = parse_dot(g.dump_dot());
  EXPECT_TRUE(d.error.empty()) << d.error;
  EXPECT_TRUE(d.labels.empty());
}

// Data access before binding: buffers are zero-filled and writable.
TEST(GraphData, ZeroFilledAndWritable) {
  Graph g;
  auto a = g.input("a", {3, 5});
  const float* p = g.data(a);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(p[i], 0.0f);
  g.data(a)[14] = 2.0f;
  EXPECT_EQ(static_cast<const Graph&>(g).data(a)[14], 2.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
}

// Moving a Graph keeps its tensors valid: they refer to the graph's storage, which moves along.
TEST(GraphMove, TensorsFollowTheStorage) {
  Graph a;
  auto x = a.input("x", {2, 3});
  auto w = a.param("w", {3, 4});
  auto y = a.matmul(x, w, false, false, "y");
  a.data(x)[5] = 7.0f;
  Graph b(std::move(a));
  EXPECT_TRUE(y.belongs_to(b));
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.name(), "y");
  EXPECT_EQ(b.data(x)[5], 7.0f);
  auto z = b.relu(y, "z");  // building goes on in the new owner
  EXPECT_EQ(b.find("z"), z);
  Graph c;
  c = std::move(b);
  EXPECT_TRUE(z.belongs_to(c));
  EXPECT_FALSE(z.belongs_to(Graph{}));
}

}  // namespace
