// Shapes and the graph builder: every shape check throws corun::Error(invalid_argument) naming the op, the
// node and the shapes; backward() preconditions; structure of successful builds; DOT output; find().
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "graphs/graph_impl.hpp"

#include "common/error_matchers.hpp"

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

// ----------------------------------------------------------------------------------------------- Shape

TEST(Shape, ValidShapes) {
  const Shape a{5};
  EXPECT_EQ(a.rank, 1);
  EXPECT_EQ(a.numel(), 5);
  EXPECT_EQ(a.str(), "[5]");
  const Shape b{2, 3, 4, 5};
  EXPECT_EQ(b.rank, 4);
  EXPECT_EQ(b.numel(), 120);
  EXPECT_EQ(b.outer(2), 6);
  EXPECT_EQ(b.inner(1), 20);
  EXPECT_EQ(b.str(), "[2, 3, 4, 5]");
  EXPECT_EQ(b, (Shape{2, 3, 4, 5}));
  EXPECT_NE(b, (Shape{2, 3, 4, 6}));
  EXPECT_NE(a, (Shape{5, 1}));
  const int64_t e[3] = {7, 1, 2};
  EXPECT_EQ(Shape::of(e, 3), (Shape{7, 1, 2}));
}

TEST(Shape, ZeroDimsIsAnError) {
  EXPECT_CORUN_ERROR(Shape(std::initializer_list<int64_t>{}), Status::invalid_argument, "1 to 4 dimensions", "got 0");
  EXPECT_CORUN_ERROR(Shape::of(nullptr, 0), Status::invalid_argument, "got 0");
}

TEST(Shape, MoreThanFourDimsIsAnError) {
  EXPECT_CORUN_ERROR((Shape{1, 2, 3, 4, 5}), Status::invalid_argument, "1 to 4 dimensions", "got 5");
  const int64_t e[6] = {1, 1, 1, 1, 1, 1};
  EXPECT_CORUN_ERROR(Shape::of(e, 6), Status::invalid_argument, "got 6");
}

TEST(Shape, NonPositiveExtentsAreErrors) {
  EXPECT_CORUN_ERROR((Shape{0}), Status::invalid_argument, "positive", "dimension 0 is 0");
  EXPECT_CORUN_ERROR((Shape{3, -2}), Status::invalid_argument, "positive", "dimension 1 is -2");
  EXPECT_CORUN_ERROR((Shape{3, 4, 5, 0}), Status::invalid_argument, "dimension 3 is 0");
}

// ----------------------------------------------------------------------------------------- Builder errors

TEST(GraphErrors, MatmulInnerDims) {
  Graph g;
  auto a = g.input("a", {2, 3});
  auto b = g.input("b", {4, 5});
  EXPECT_CORUN_ERROR(g.matmul(a, b, false, false, "mm"), Status::invalid_argument, "matmul", "'mm'", "inner", "[2, 3]",
                     "[4, 5]");
  // With transposes the message still shows both (untransposed) shapes.
  auto c = g.input("c", {3, 2});
  EXPECT_CORUN_ERROR(g.matmul(a, c, true, false, "mmt"), Status::invalid_argument, "matmul", "'mmt'", "A^T of [2, 3]",
                     "[3, 2]");
  // Non-2-D operands.
  auto v = g.input("v", {3});
  EXPECT_CORUN_ERROR(g.matmul(a, v, false, false, "mm1d"), Status::invalid_argument, "matmul", "'mm1d'", "2-D",
                     "[2, 3]", "[3]");
  // A failed op adds nothing.
  EXPECT_EQ(g.num_nodes(), 0);
  EXPECT_EQ(g.num_values(), 4);
  // Valid products, with and without transposes.
  EXPECT_EQ(g.matmul(a, c, false, false, "ok").shape(), (Shape{2, 2}));
  EXPECT_EQ(g.matmul(a, c, true, true, "okt").shape(), (Shape{3, 3}));
  EXPECT_EQ(g.matmul(a, a, false, true, "okbt").shape(), (Shape{2, 2}));
}

TEST(GraphErrors, UnnamedNodeIsNamedInTheMessage) {
  Graph g;
  auto a = g.input("a", {2, 3});
  auto b = g.input("b", {2, 3});
  g.add(a, b);  // node 0
  EXPECT_CORUN_ERROR(g.matmul(a, b), Status::invalid_argument, "matmul 'matmul_1'", "[2, 3]");
}

TEST(GraphErrors, AddNotBroadcastable) {
  Graph g;
  auto a = g.input("a", {4, 3});
  auto b = g.input("b", {4});     // wrong bias length
  auto c = g.input("c", {3, 4});  // transposed shape
  auto d = g.input("d", {3});
  EXPECT_CORUN_ERROR(g.add(a, b, "badbias"), Status::invalid_argument, "add", "'badbias'", "[4, 3]", "[4]");
  EXPECT_CORUN_ERROR(g.add(a, c, "badshape"), Status::invalid_argument, "add", "'badshape'", "[4, 3]", "[3, 4]");
  // The bias must be the second operand and A must be at least 2-D.
  EXPECT_CORUN_ERROR(g.add(d, a, "swapped"), Status::invalid_argument, "add", "'swapped'", "[3]", "[4, 3]");
  // A valid bias add works.
  EXPECT_EQ(g.add(a, d, "ok").shape(), (Shape{4, 3}));
}

TEST(GraphErrors, SubMulNeedSameShapes) {
  Graph g;
  auto a = g.input("a", {4, 3});
  auto bias = g.input("bias", {3});
  auto c = g.input("c", {4, 2});
  EXPECT_CORUN_ERROR(g.sub(a, c, "s"), Status::invalid_argument, "sub", "'s'", "same shape", "[4, 3]", "[4, 2]");
  EXPECT_CORUN_ERROR(g.mul(a, c, "m"), Status::invalid_argument, "mul", "'m'", "same shape", "[4, 3]", "[4, 2]");
  // sub and mul do not broadcast a bias.
  EXPECT_CORUN_ERROR(g.sub(a, bias, "sb"), Status::invalid_argument, "sub", "'sb'", "[4, 3]", "[3]");
  EXPECT_CORUN_ERROR(g.mul(a, bias, "mb"), Status::invalid_argument, "mul", "'mb'", "[4, 3]", "[3]");
}

TEST(GraphErrors, ConcatMismatch) {
  Graph g;
  auto a = g.input("a", {2, 3});
  auto b = g.input("b", {3, 3});
  auto c = g.input("c", {2, 3, 1});
  EXPECT_CORUN_ERROR(g.concat({a, b}, 1, "cat"), Status::invalid_argument, "concat", "'cat'", "dimension 1", "[2, 3]",
                     "[3, 3]");
  EXPECT_CORUN_ERROR(g.concat({a, c}, 0, "cat3"), Status::invalid_argument, "concat", "'cat3'", "[2, 3]", "[2, 3, 1]");
  EXPECT_CORUN_ERROR(g.concat({a, a}, 2, "catdim"), Status::invalid_argument, "concat", "'catdim'", "dimension 2",
                     "[2, 3]");
  EXPECT_CORUN_ERROR(g.concat({}, 0, "empty"), Status::invalid_argument, "concat", "'empty'");
  EXPECT_EQ(g.concat({a, b}, 0, "ok").shape(), (Shape{5, 3}));
}

TEST(GraphErrors, SplitSizesMustAddUp) {
  Graph g;
  auto x = g.input("x", {2, 6});
  EXPECT_CORUN_ERROR(g.split(x, 1, {2, 3}, "sp"), Status::invalid_argument, "split", "'sp'", "add up to 5", "[2, 6]",
                     "[2, 5]");
  EXPECT_CORUN_ERROR(g.split(x, 1, {4, 4}, "sp2"), Status::invalid_argument, "split", "'sp2'", "add up to 8", "[2, 6]",
                     "[2, 8]");
  EXPECT_CORUN_ERROR(g.split(x, 1, {6, 0}, "sp0"), Status::invalid_argument, "split", "'sp0'", "positive");
  EXPECT_CORUN_ERROR(g.split(x, 1, {}, "spe"), Status::invalid_argument, "split", "'spe'");
  EXPECT_CORUN_ERROR(g.split(x, 2, {1, 1}, "spd"), Status::invalid_argument, "split", "'spd'", "dimension 2", "[2, 6]");
  auto parts = g.split(x, 1, {1, 2, 3}, "ok");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(parts[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[2].shape(), (Shape{2, 3}));
}

TEST(GraphErrors, SliceOutOfRange) {
  Graph g;
  auto x = g.input("x", {2, 4});
  EXPECT_CORUN_ERROR(g.slice(x, 1, 2, 3, "sl"), Status::invalid_argument, "slice", "'sl'", "[2, 5)", "dimension 1",
                     "[2, 4]");
  EXPECT_CORUN_ERROR(g.slice(x, 1, -1, 2, "neg"), Status::invalid_argument, "slice", "'neg'", "[2, 4]");
  EXPECT_CORUN_ERROR(g.slice(x, 0, 0, 0, "zero"), Status::invalid_argument, "slice", "'zero'", "[2, 4]");
  EXPECT_CORUN_ERROR(g.slice(x, 2, 0, 1, "dim"), Status::invalid_argument, "slice", "'dim'", "dimension 2", "[2, 4]");
  EXPECT_CORUN_ERROR(g.slice(x, -1, 0, 1, "dimneg"), Status::invalid_argument, "slice", "'dimneg'", "[2, 4]");
  EXPECT_EQ(g.slice(x, 1, 1, 3, "ok").shape(), (Shape{2, 3}));
}

TEST(GraphErrors, SumBadDim) {
  Graph g;
  auto x = g.input("x", {2, 3});
  EXPECT_CORUN_ERROR(g.sum(x, 2, 1.0f, "s"), Status::invalid_argument, "sum", "'s'", "dimension 2", "[2, 3]");
  EXPECT_CORUN_ERROR(g.sum(x, -1, 1.0f, "sn"), Status::invalid_argument, "sum", "'sn'", "dimension -1", "[2, 3]");
  EXPECT_EQ(g.sum(x, 0, 1.0f, "s0").shape(), (Shape{3}));
  EXPECT_EQ(g.sum(x, 1, 1.0f, "s1").shape(), (Shape{2}));
  auto v = g.input("v", {7});
  EXPECT_EQ(g.sum(v, 0, 1.0f, "sv").shape(), (Shape{1}));
}

TEST(GraphErrors, SoftmaxXentShapes) {
  Graph g;
  auto z = g.input("z", {4, 10});
  auto t = g.input("t", {4, 9});
  auto z1 = g.input("z1", {40});
  EXPECT_CORUN_ERROR(g.softmax_xent(z, t, "loss"), Status::invalid_argument, "softmax_xent", "'loss'", "[4, 10]",
                     "[4, 9]");
  EXPECT_CORUN_ERROR(g.softmax_xent(z1, z1, "loss1d"), Status::invalid_argument, "softmax_xent", "'loss1d'", "2-D",
                     "[40]");
}

TEST(GraphErrors, LstmCellShapes) {
  Graph g;
  auto z = g.input("z", {4, 12});
  auto c = g.input("c", {4, 3});
  auto c_rows = g.input("c_rows", {5, 3});
  auto c_1d = g.input("c_1d", {3});
  auto z_3d = g.input("z_3d", {4, 12, 1});
  EXPECT_CORUN_ERROR(g.lstm_cell(z, c_rows, "cell"), Status::invalid_argument, "lstm_cell", "'cell'",
                     "[batch, 4 * hidden]", "[4, 12]", "[5, 3]");
  EXPECT_CORUN_ERROR(g.lstm_cell(c, c, "cell_h"), Status::invalid_argument, "lstm_cell", "4 * hidden", "[4, 3]");
  EXPECT_CORUN_ERROR(g.lstm_cell(z, c_1d, "cell_1d"), Status::invalid_argument, "lstm_cell", "2-D", "[3]");
  EXPECT_CORUN_ERROR(g.lstm_cell(z_3d, c, "cell_3d"), Status::invalid_argument, "lstm_cell", "[4, 12, 1]");
  EXPECT_EQ(g.num_nodes(), 0);
  const auto [h, c1] = g.lstm_cell(z, c, "cell");
  EXPECT_EQ(h.shape(), (Shape{4, 3}));
  EXPECT_EQ(c1.shape(), (Shape{4, 3}));
  EXPECT_EQ(h.name(), "cell.h");
  EXPECT_EQ(c1.name(), "cell.c");
  EXPECT_EQ(g.find("cell.h"), h);
  EXPECT_EQ(g.find("cell.c"), c1);
  ASSERT_EQ(g.num_nodes(), 1);
  const auto& n = g.impl().nodes[0];
  EXPECT_EQ(n.call.kind, corun::codelets::OpKind::lstm_cell);
  // Buffers: Z, Cp -> C, H, activated gates [4, 12], tanh(C).
  ASSERT_EQ(n.buffers.size(), 6u);
  EXPECT_EQ(n.buffers[2], c1.id());
  EXPECT_EQ(n.buffers[3], h.id());
  EXPECT_EQ(n.call.shapes[4], (Shape{4, 12}));
}

TEST(GraphErrors, TensorFromAnotherGraph) {
  Graph g, other;
  auto a = g.input("a", {2, 2});
  auto b = other.input("b", {2, 2});
  EXPECT_CORUN_ERROR(g.matmul(a, b, false, false, "mm"), Status::invalid_argument, "matmul", "'mm'", "another graph");
  EXPECT_CORUN_ERROR(g.add(b, a, "ad"), Status::invalid_argument, "add", "'ad'", "another graph");
  EXPECT_CORUN_ERROR(g.sigmoid(b, "sg"), Status::invalid_argument, "sigmoid", "'sg'", "another graph");
  EXPECT_CORUN_ERROR(g.concat({a, b}, 0, "c"), Status::invalid_argument, "concat", "'c'", "another graph");
  EXPECT_CORUN_ERROR(g.softmax_xent(a, b, "l"), Status::invalid_argument, "softmax_xent", "'l'", "another graph");
  EXPECT_CORUN_ERROR(g.tanh(Tensor(), "inv"), Status::invalid_argument, "tanh", "'inv'", "default-constructed");
  EXPECT_CORUN_ERROR(g.grad(b), Status::invalid_argument, "another graph");
  EXPECT_EQ(g.num_nodes(), 0);
}

TEST(GraphErrors, LeafNames) {
  Graph g;
  g.input("x", {2});
  EXPECT_CORUN_ERROR(g.input("x", {3}), Status::invalid_argument, "'x'", "already used");
  EXPECT_CORUN_ERROR(g.param("x", {3}), Status::invalid_argument, "'x'", "already used");
  EXPECT_CORUN_ERROR(g.input("", {3}), Status::invalid_argument, "name is required");
  EXPECT_CORUN_ERROR(g.param("", {3}), Status::invalid_argument, "name is required");
  EXPECT_CORUN_ERROR(g.input("e", Shape()), Status::invalid_argument, "'e'", "empty shape");
  EXPECT_CORUN_ERROR(g.find("nosuch"), Status::invalid_argument, "'nosuch'");
}

// --------------------------------------------------------------------------------------------- backward

// loss = mean xent(relu(x W + b) V + c, t): two layers, four parameters.
struct Mlp {
  Graph g;
  Tensor x, t, w, b, v, c, h, logits, loss;
  Mlp() {
    x = g.input("x", {8, 5});
    t = g.input("t", {8, 3});
    w = g.param("w", {5, 6});
    b = g.param("b", {6});
    v = g.param("v", {6, 3});
    c = g.param("c", {3});
    h = g.relu(g.add(g.matmul(x, w, false, false, "xw"), b, "xwb"), "h");
    logits = g.add(g.matmul(h, v, false, false, "hv"), c, "logits");
    loss = g.softmax_xent(logits, t, "loss");
  }
};

TEST(Backward, LossMustBeScalar) {
  Mlp m;
  const int nodes = m.g.num_nodes();
  const int values = m.g.num_values();
  EXPECT_CORUN_ERROR(m.g.backward(m.logits), Status::invalid_argument, "backward", "'logits'", "[1]", "[8, 3]");
  // The failed call changed nothing: a correct call still works.
  EXPECT_EQ(m.g.num_nodes(), nodes);
  EXPECT_EQ(m.g.num_values(), values);
  m.g.backward(m.loss);
  EXPECT_GT(m.g.num_nodes(), nodes);
}

TEST(Backward, OnlyOnce) {
  Mlp m;
  m.g.backward(m.loss);
  const int nodes = m.g.num_nodes();
  EXPECT_CORUN_ERROR(m.g.backward(m.loss), Status::invalid_argument, "backward", "already");
  EXPECT_EQ(m.g.num_nodes(), nodes);
  // Parameters cannot be added afterwards.
  EXPECT_CORUN_ERROR(m.g.param("late", {2}), Status::invalid_argument, "'late'", "before backward");
}

TEST(Backward, LossMustDependOnParams) {
  Graph g;
  auto x = g.input("x", {4, 3});
  auto t = g.input("t", {4, 3});
  g.param("w", {3, 3});  // exists but unused
  auto loss = g.softmax_xent(x, t, "loss");
  const int nodes = g.num_nodes();
  EXPECT_CORUN_ERROR(g.backward(loss), Status::invalid_argument, "backward", "'loss'", "does not depend");
  EXPECT_EQ(g.num_nodes(), nodes);
}

TEST(Backward, LossFromAnotherGraphOrInvalid) {
  Mlp m;
  Graph other;
  auto p = other.param("p", {1});
  auto l = other.sum(p, 0, 1.0f, "l");
  EXPECT_CORUN_ERROR(m.g.backward(l), Status::invalid_argument, "backward", "not a tensor of this graph");
  EXPECT_CORUN_ERROR(m.g.backward(Tensor()), Status::invalid_argument, "backward");
}

TEST(Backward, NonPositiveLearningRate) {
  Mlp m;
  EXPECT_CORUN_ERROR(m.g.backward(m.loss, {.sgd_update = true, .learning_rate = 0.0f}), Status::invalid_argument,
                     "learning rate");
  m.g.backward(m.loss, {.sgd_update = true, .learning_rate = 0.25f});
  EXPECT_CORUN_ERROR(m.g.set_learning_rate(-1.0f), Status::invalid_argument, "learning rate");
}

// Occurrences of `prefix` in the DOT text (SGD update nodes are named "sgd.<param>").
int count_in_dot(const Graph& g, const std::string& prefix) {
  const std::string dot = g.dump_dot();
  int n = 0;
  for (size_t p = dot.find(prefix); p != std::string::npos; p = dot.find(prefix, p + 1)) ++n;
  return n;
}

TEST(Backward, SuccessfulBuild) {
  Mlp m;
  EXPECT_EQ(m.h.shape(), (Shape{8, 6}));
  EXPECT_EQ(m.logits.shape(), (Shape{8, 3}));
  EXPECT_EQ(m.loss.shape(), (Shape{1}));
  EXPECT_EQ(m.g.kind(m.loss), ValueKind::activation);
  EXPECT_EQ(m.g.kind(m.w), ValueKind::param);
  EXPECT_EQ(m.g.kind(m.x), ValueKind::input);
  EXPECT_EQ(m.g.params().size(), 4u);
  EXPECT_EQ(m.g.inputs().size(), 2u);
  // No gradients before backward().
  EXPECT_FALSE(m.g.grad(m.w).valid());

  const int forward_nodes = m.g.num_nodes();
  m.g.backward(m.loss, {.sgd_update = true, .learning_rate = 0.1f});
  for (Tensor p : m.g.params()) {
    const Tensor d = m.g.grad(p);
    ASSERT_TRUE(d.valid()) << p.name();
    EXPECT_EQ(d.shape(), p.shape()) << p.name();
    EXPECT_EQ(m.g.kind(d), ValueKind::gradient) << p.name();
  }
  // Inputs get no gradient; activations on the path do.
  EXPECT_FALSE(m.g.grad(m.x).valid());
  EXPECT_FALSE(m.g.grad(m.t).valid());
  EXPECT_TRUE(m.g.grad(m.h).valid());
  EXPECT_EQ(m.g.grad(m.h).shape(), m.h.shape());

  // One SGD node per parameter, all after the forward nodes.
  const auto& impl = m.g.impl();
  int sgd = 0;
  std::set<int> updated;
  for (int k = 0; k < m.g.num_nodes(); ++k) {
    const auto& n = impl.nodes[static_cast<size_t>(k)];
    EXPECT_EQ(n.is_gradient, k >= forward_nodes) << n.name;
    if (n.call.kind == corun::codelets::OpKind::sgd) {
      ++sgd;
      updated.insert(n.buffers[0]);
      EXPECT_FLOAT_EQ(n.call.f, 0.1f);
      EXPECT_EQ(n.name, "sgd." + m.g.value(n.buffers[0]).name());
    }
  }
  EXPECT_EQ(sgd, static_cast<int>(m.g.params().size()));
  for (Tensor p : m.g.params()) EXPECT_TRUE(updated.count(p.id())) << p.name();
  EXPECT_EQ(count_in_dot(m.g, "sgd."), 4);

  m.g.set_learning_rate(0.5f);
  for (const auto& n : impl.nodes) {
    if (n.call.kind == corun::codelets::OpKind::sgd) {
      EXPECT_FLOAT_EQ(n.call.f, 0.5f);
    }
  }
}

TEST(Backward, NoSgdWhenDisabledAndUnusedParamsGetNothing) {
  Graph g;
  auto x = g.input("x", {2, 3});
  auto t = g.input("t", {2, 4});
  auto w = g.param("w", {3, 4});
  auto unused = g.param("unused", {5});
  auto loss = g.softmax_xent(g.matmul(x, w), t, "loss");
  g.backward(loss, {.sgd_update = false});
  EXPECT_TRUE(g.grad(w).valid());
  EXPECT_FALSE(g.grad(unused).valid());
  for (const auto& n : g.impl().nodes) EXPECT_NE(n.call.kind, corun::codelets::OpKind::sgd) << n.name;

  Graph g2;
  auto x2 = g2.input("x", {2, 3});
  auto t2 = g2.input("t", {2, 4});
  auto w2 = g2.param("w", {3, 4});
  auto unused2 = g2.param("unused", {5});
  g2.backward(g2.softmax_xent(g2.matmul(x2, w2), t2, "loss"));
  int sgd = 0;
  for (const auto& n : g2.impl().nodes) sgd += n.call.kind == corun::codelets::OpKind::sgd;
  EXPECT_EQ(sgd, 1);  // only the parameter the loss depends on
  EXPECT_FALSE(g2.grad(unused2).valid());
}

TEST(Backward, EveryDifferentiableOpBuilds) {
  // One graph using every public op; backward must produce gradients of the right shape for all params.
  Graph g;
  auto x = g.input("x", {4, 6});
  auto t = g.input("t", {4, 3});
  auto w = g.param("w", {6, 8});
  auto b = g.param("b", {8});
  auto u = g.param("u", {4, 4});
  auto v = g.param("v", {8, 3});
  auto y = g.add(g.matmul(x, w), b);   // [4, 8]
  auto parts = g.split(y, 1, {4, 4});  // 2 x [4, 4]
  auto s = g.sigmoid(parts[0]);
  auto th = g.tanh(parts[1]);
  auto r = g.relu(g.sub(g.mul(s, th), u));           // [4, 4]
  auto cat = g.concat({r, g.slice(y, 1, 2, 4)}, 1);  // [4, 8]
  auto logits = g.matmul(cat, v);                    // [4, 3]
  auto loss = g.add(g.softmax_xent(logits, t), g.sum(g.sum(u, 0), 0, 0.01f));
  ASSERT_EQ(loss.shape(), (Shape{1}));
  g.backward(loss);
  for (Tensor p : g.params()) {
    ASSERT_TRUE(g.grad(p).valid()) << p.name();
    EXPECT_EQ(g.grad(p).shape(), p.shape()) << p.name();
  }
}

// lstm_cell's backward: one lstm_cell_grad per cell; a missing gradient of h or c is a zero constant; the
// cell state's gradient reaching the previous cell sums the next cell's and any direct use.
TEST(Backward, LstmCellGradientNodes) {
  Graph g;
  auto z1 = g.param("z1", {2, 8});
  auto z2 = g.param("z2", {2, 8});
  auto c0 = g.param("c0", {2, 2});
  auto t = g.input("t", {2, 2});
  const auto [h1, c1] = g.lstm_cell(z1, c0, "cell1");
  const auto [h2, c2] = g.lstm_cell(z2, c1, "cell2");
  (void)h1;
  (void)c2;  // c2 unused: cell2's backward gets a zero dC
  auto loss = g.add(g.softmax_xent(h2, t), g.sum(g.sum(c1, 0), 0));
  g.backward(loss, {.sgd_update = false});
  std::vector<const corun::detail::Node*> grads;
  for (const auto& n : g.impl().nodes)
    if (n.call.kind == corun::codelets::OpKind::lstm_cell_grad) grads.push_back(&n);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0]->name, "grad.cell2");  // reverse creation order
  const auto& vals = g.impl().values;
  EXPECT_EQ(vals[static_cast<size_t>(grads[0]->buffers[4])].kind, ValueKind::constant) << "dC of cell2";
  EXPECT_EQ(vals[static_cast<size_t>(grads[1]->buffers[4])].kind, ValueKind::gradient) << "dC of cell1";
  EXPECT_EQ(grads[1]->buffers[4], g.grad(c1).id());
  for (Tensor p : g.params()) {
    ASSERT_TRUE(g.grad(p).valid()) << p.name();
    EXPECT_EQ(g.grad(p).shape(), p.shape()) << p.name();
  }
}

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
