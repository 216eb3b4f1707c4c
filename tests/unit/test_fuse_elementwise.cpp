// Graph::fuse_elementwise (graphs/passes/fuse_elementwise): which chains fuse and which must not, what the
// fused node looks like, the errors around fused-away values, and the ew_chain program checker. No StarPU:
// the numbers of fused graphs are checked in tests/engine/test_fusion.cpp.
#include <corun/error.hpp>
#include <corun/graph.hpp>
#include <corun/models/lstm.hpp>

#include "codelets/ew_chain/ew_chain.hpp"
#include "graphs/graph_impl.hpp"

#include "common/error_matchers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Status;
using corun::Tensor;
using corun::ValueKind;
using corun::codelets::Access;
using corun::codelets::OpCall;
using corun::codelets::OpKind;

bool fused_away(const Graph& g, Tensor t) { return g.impl().values[static_cast<size_t>(t.id())].fused_away; }

const corun::detail::Node& only_node(const Graph& g) {
  EXPECT_EQ(g.num_nodes(), 1);
  return g.impl().nodes.front();
}

std::string program(const corun::detail::Node& n) { return corun::codelets::ew_program_str(n.call); }

// Every value a node reads is a leaf or was written by an earlier node, no node touches a fused-away value,
// and every ew_chain passes the program checker: the fused graph is still a valid submission order.
void expect_sound(const Graph& g) {
  const auto& impl = g.impl();
  std::vector<bool> written(impl.values.size(), false);
  for (const auto& n : impl.nodes) {
    for (size_t b = 0; b < n.buffers.size(); ++b) {
      const auto& v = impl.values[static_cast<size_t>(n.buffers[b])];
      EXPECT_FALSE(v.fused_away) << n.name << " uses removed value " << v.name;
      const bool leaf = v.kind == ValueKind::input || v.kind == ValueKind::param || v.kind == ValueKind::constant;
      if (n.call.modes[b] != Access::write) {
        EXPECT_TRUE(leaf || written[static_cast<size_t>(n.buffers[b])])
            << n.name << " reads " << v.name << " before it is written";
      }
    }
    for (size_t b = 0; b < n.buffers.size(); ++b)
      if (n.call.modes[b] != Access::read) written[static_cast<size_t>(n.buffers[b])] = true;
    if (n.call.kind == OpKind::ew_chain) {
      EXPECT_NO_THROW(corun::codelets::check_ew_program(n.call)) << n.name;
    }
  }
}

TEST(FuseElementwise, LinearChainBecomesOneNode) {
  Graph g;
  auto x = g.input("x", {4, 5});
  auto p = g.param("p", {4, 5});
  auto a = g.add(x, p, "a");
  auto s = g.sigmoid(a, "s");
  auto t = g.tanh(s, "t");
  auto y = g.relu(t, "y");
  g.keep(y);
  EXPECT_EQ(g.fuse_elementwise(), 3);
  const auto& n = only_node(g);
  EXPECT_EQ(n.call.kind, OpKind::ew_chain);
  EXPECT_EQ(n.name, "ew_chain.y");
  EXPECT_EQ(program(n), "t0 = add(x0, x1); t1 = sigmoid(t0); t2 = tanh(t1); t3 = relu(t2)");
  EXPECT_EQ(n.buffers, (std::vector<int>{x.id(), p.id(), y.id()}));
  EXPECT_EQ(n.call.modes, (std::vector<Access>{Access::read, Access::read, Access::write}));
  for (Tensor v : {a, s, t}) EXPECT_TRUE(fused_away(g, v)) << v.name();
  EXPECT_FALSE(fused_away(g, y));
  EXPECT_EQ(g.impl().values[static_cast<size_t>(y.id())].producer, 0);
  EXPECT_NE(g.dump_dot().find("t3 = relu(t2)"), std::string::npos) << "the DOT label shows the program";
  expect_sound(g);
}

TEST(FuseElementwise, TreeKeepsOperandOrderAndSharedResults) {
  Graph g;
  auto x = g.input("x", {3, 7});
  auto w = g.input("w", {3, 7});
  auto a = g.sigmoid(x);
  auto b = g.tanh(w);
  auto d = g.sub(b, a);  // operand order matters for sub
  auto y = g.mul(d, d);  // one reader using the value twice
  g.keep(y);
  EXPECT_EQ(g.fuse_elementwise(), 3);
  const auto& n = only_node(g);
  EXPECT_EQ(program(n), "t0 = sigmoid(x0); t1 = tanh(x1); t2 = sub(t1, t0); t3 = mul(t2, t2)");
  EXPECT_EQ(n.buffers, (std::vector<int>{x.id(), w.id(), y.id()}));
  expect_sound(g);
}

TEST(FuseElementwise, ValueWithTwoReadersIsNotRemoved) {
  Graph g;
  auto x = g.input("x", {4, 4});
  auto s = g.sigmoid(x, "s");
  auto t = g.tanh(s);
  auto r = g.relu(s);  // s is read twice
  auto y = g.add(t, r, "y");
  g.keep(y);
  EXPECT_EQ(g.fuse_elementwise(), 2);  // tanh and relu fold into the add; the sigmoid stays
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.impl().nodes[0].call.kind, OpKind::sigmoid);
  EXPECT_EQ(program(g.impl().nodes[1]), "t0 = tanh(x0); t1 = relu(x0); t2 = add(t0, t1)");
  EXPECT_FALSE(fused_away(g, s));
  expect_sound(g);
}

TEST(FuseElementwise, KeptValuesSplitTheChain) {
  Graph g;
  auto x = g.input("x", {4, 4});
  auto s = g.sigmoid(x, "s");
  auto t = g.tanh(s, "t");
  auto y = g.relu(t, "y");
  g.keep(s);
  EXPECT_EQ(g.fuse_elementwise(), 1);  // t fuses into y; s, kept, stays an output
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_FALSE(fused_away(g, s));
  EXPECT_TRUE(fused_away(g, t));
  EXPECT_FALSE(fused_away(g, y)) << "the output of a chain is never removed";
  expect_sound(g);
}

TEST(FuseElementwise, ShapeChangesStopChains) {
  Graph g;
  auto x = g.input("x", {4, 6});
  auto r = g.relu(g.sum(g.sigmoid(x), 0));          // [4, 6] -> [6]
  auto y = g.tanh(g.slice(g.sigmoid(x), 1, 0, 3));  // [4, 6] -> [4, 3]
  g.keep(r);
  g.keep(y);
  const int before = g.num_nodes();
  EXPECT_EQ(g.fuse_elementwise(), 0);
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(FuseElementwise, BroadcastAddIsNotChained) {
  Graph g;
  auto x = g.input("x", {4, 6});
  auto bias = g.param("bias", {6});
  auto y = g.tanh(g.add(g.sigmoid(x), bias));
  g.keep(y);
  EXPECT_EQ(g.fuse_elementwise(), 0);
  EXPECT_EQ(g.num_nodes(), 3);
}

TEST(FuseElementwise, UnkeptOutputsOfInferenceGraphsAreFusedToo) {
  // Only keep() protects a value: a graph whose user forgot keep() still fuses, and read fails clearly
  // (tests/engine/test_fusion.cpp); the chain's last value always stays.
  Graph g;
  auto x = g.input("x", {2, 2});
  auto s = g.sigmoid(x);
  auto y = g.tanh(s);
  EXPECT_EQ(g.fuse_elementwise(), 1);
  EXPECT_TRUE(fused_away(g, s));
  EXPECT_FALSE(fused_away(g, y));
}

TEST(FuseElementwise, LongChainsAreCutAtTheProgramLimit) {
  Graph g;
  Tensor t = g.input("x", {5});
  const int n = 40;
  for (int k = 0; k < n; ++k) t = g.tanh(t);
  g.keep(t);
  const int per_chain = corun::codelets::kMaxEwInstructions;
  const int chains = (n + per_chain - 1) / per_chain;
  EXPECT_EQ(g.fuse_elementwise(), n - chains);
  EXPECT_EQ(g.num_nodes(), chains);
  for (const auto& node : g.impl().nodes) {
    EXPECT_EQ(node.call.kind, OpKind::ew_chain);
    EXPECT_LE(static_cast<int>(node.call.program.size()), per_chain * corun::codelets::kEwFields);
  }
  expect_sound(g);
}

// The fused node runs where the chain's last node was: a chain whose input is rewritten in between (an
// in-place update) must not be fused across that write.
TEST(FuseElementwise, NoReadMovesPastAWrite) {
  for (bool write_in_between : {false, true}) {
    SCOPED_TRACE(write_in_between ? "with an in-place update in between" : "without");
    Graph g;
    auto w = g.param("w", {3, 3});
    auto x = g.input("x", {3, 3});
    auto m = g.mul(w, x);
    if (write_in_between) {
      OpCall call;
      call.kind = OpKind::sgd;
      call.shapes = {w.shape(), x.shape()};
      call.modes = {Access::readwrite, Access::read};
      call.f = 0.1f;
      g.impl().add_node("update_w", call, {w.id(), x.id()}, false);
    }
    auto y = g.sigmoid(m);
    g.keep(y);
    EXPECT_EQ(g.fuse_elementwise(), write_in_between ? 0 : 1);
    expect_sound(g);
  }
}

TEST(FuseElementwise, LossAndGradientsAreKeptAutomatically) {
  Graph g;
  auto x = g.input("x", {4, 3});
  auto t = g.input("t", {4, 3});
  auto w = g.param("w", {3, 3});
  auto u = g.param("u", {4, 3});
  auto h = g.mul(g.tanh(g.matmul(x, w)), g.sigmoid(u));
  auto loss = g.softmax_xent(g.add(h, u), t, "loss");
  g.backward(loss);
  std::vector<Tensor> grads;
  for (int v = 0; v < g.num_values(); ++v)
    if (Tensor d = g.grad(g.value(v)); d.valid()) grads.push_back(d);
  ASSERT_FALSE(grads.empty());
  g.fuse_elementwise();
  EXPECT_FALSE(fused_away(g, loss));
  for (Tensor d : grads) EXPECT_FALSE(fused_away(g, d)) << d.name();
  for (Tensor p : g.params()) EXPECT_FALSE(fused_away(g, p));
  expect_sound(g);
}

TEST(FuseElementwise, Errors) {
  Graph g;
  auto x = g.param("x", {2, 3});
  auto t = g.input("t", {2, 3});
  auto s = g.sigmoid(x, "s");
  auto y = g.tanh(s, "y");
  auto loss = g.softmax_xent(y, t, "loss");
  g.fuse_elementwise();
  ASSERT_TRUE(fused_away(g, s));
  EXPECT_CORUN_ERROR(g.backward(loss), Status::invalid_argument, "backward", "fuse_elementwise", "backward() first");
  EXPECT_CORUN_ERROR(g.relu(s, "r"), Status::invalid_argument, "'s'", "fuse_elementwise", "keep()");
  EXPECT_CORUN_ERROR(g.data(s), Status::invalid_argument, "'s'", "fuse_elementwise", "keep()");
  EXPECT_CORUN_ERROR(g.keep(s), Status::invalid_argument, "'s'", "fuse_elementwise");
  EXPECT_EQ(g.fuse_elementwise(), 0) << "a second call has nothing left to fuse";
}

// The unfused LSTM's training graph: the backward's per-step mul/tanh_grad/add groups and the bias
// gradient's accumulation chains fuse; the fused-cell graph keeps only the accumulation chains.
TEST(FuseElementwise, LstmTrainingGraphs) {
  auto cfg = corun::models::lstm_config("small");
  cfg.layers = 2, cfg.seq = 6, cfg.hidden = 8, cfg.input = 8, cfg.batch = 4;
  for (bool fused_cell : {false, true}) {
    SCOPED_TRACE(fused_cell ? "fused cell" : "unfused cell");
    cfg.fused_cell = fused_cell;
    corun::models::Lstm m(cfg);
    const int before = m.graph.num_nodes();
    const int removed = m.graph.fuse_elementwise();
    EXPECT_GT(removed, 0);
    EXPECT_EQ(m.graph.num_nodes(), before - removed);
    bool grad_chain = false;
    for (const auto& n : m.graph.impl().nodes)
      grad_chain = grad_chain || (n.call.kind == OpKind::ew_chain && program(n).find("tanh_grad") != std::string::npos);
    EXPECT_EQ(grad_chain, !fused_cell);
    for (Tensor p : m.graph.params()) EXPECT_FALSE(fused_away(m.graph, m.graph.grad(p))) << p.name();
    EXPECT_FALSE(fused_away(m.graph, m.logits));
    expect_sound(m.graph);
  }
}

// ------------------------------------------------------------------------------ ew_chain program checker

OpCall chain(int n_in, std::vector<int32_t> program, Shape s = Shape{4}) {
  OpCall c;
  c.kind = OpKind::ew_chain;
  c.shapes.assign(static_cast<size_t>(n_in + 1), s);
  c.modes.assign(static_cast<size_t>(n_in), Access::read);
  c.modes.push_back(Access::write);
  c.program = std::move(program);
  return c;
}

TEST(EwProgram, ValidProgramsPass) {
  const int32_t add = static_cast<int32_t>(OpKind::add), tanh = static_cast<int32_t>(OpKind::tanh);
  EXPECT_NO_THROW(corun::codelets::check_ew_program(chain(2, {add, 0, 1, tanh, 2, -1})));
  EXPECT_EQ(corun::codelets::ew_program_str(chain(2, {add, 0, 1, tanh, 2, -1})), "t0 = add(x0, x1); t1 = tanh(t0)");
}

TEST(EwProgram, MalformedProgramsAreRejected) {
  using corun::codelets::check_ew_program;
  const int32_t add = static_cast<int32_t>(OpKind::add), tanh = static_cast<int32_t>(OpKind::tanh);
  const int32_t matmul = static_cast<int32_t>(OpKind::matmul);
  EXPECT_CORUN_ERROR(check_ew_program(chain(1, {})), Status::invalid_argument, "ew_chain", "non-empty");
  EXPECT_CORUN_ERROR(check_ew_program(chain(1, {tanh, 0})), Status::invalid_argument, "triples");
  EXPECT_CORUN_ERROR(check_ew_program(chain(2, {matmul, 0, 1})), Status::invalid_argument, "not chainable");
  EXPECT_CORUN_ERROR(check_ew_program(chain(2, {add, 0, 2})), Status::invalid_argument, "instruction 0",
                     "operand 1 is 2");  // its own result
  EXPECT_CORUN_ERROR(check_ew_program(chain(1, {tanh, 0, 0})), Status::invalid_argument, "must be -1");
  EXPECT_CORUN_ERROR(check_ew_program(chain(1, {tanh, -1, -1})), Status::invalid_argument, "operand 0 is -1");
  std::vector<int32_t> too_long;
  for (int k = 0; k <= corun::codelets::kMaxEwInstructions; ++k) too_long.insert(too_long.end(), {tanh, k, -1});
  EXPECT_CORUN_ERROR(check_ew_program(chain(1, too_long)), Status::invalid_argument, "at most");
  OpCall mixed = chain(2, {add, 0, 1});
  mixed.shapes[1] = Shape{2, 2};
  EXPECT_CORUN_ERROR(check_ew_program(mixed), Status::invalid_argument, "buffer 1", "[2, 2]", "[4]");
  OpCall modes = chain(2, {add, 0, 1});
  modes.modes[1] = Access::readwrite;
  EXPECT_CORUN_ERROR(check_ew_program(modes), Status::invalid_argument, "buffer 1 must be read");
}

}  // namespace
