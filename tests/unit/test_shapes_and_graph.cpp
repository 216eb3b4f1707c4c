// Shapes and the graph builder: every shape check throws corun::Error(invalid_argument) naming the op, the
// node and the shapes. backward(): test_graph_backward.cpp; names, find() and DOT: test_graph_names.cpp.
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "codelets/unary_math/unary_math.hpp"
#include "graphs/graph_impl.hpp"

#include "common/error_matchers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
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
  // A bias as the first operand broadcasts too (numpy rules, a binary_bcast node).
  EXPECT_EQ(g.add(d, a, "swapped").shape(), (Shape{4, 3}));
  // A valid bias add works.
  EXPECT_EQ(g.add(a, d, "ok").shape(), (Shape{4, 3}));
}

TEST(GraphErrors, SubMulNeedShapesThatBroadcast) {
  Graph g;
  auto a = g.input("a", {4, 3});
  auto bias = g.input("bias", {3});
  auto c = g.input("c", {4, 2});
  EXPECT_CORUN_ERROR(g.sub(a, c, "s"), Status::invalid_argument, "sub", "'s'", "same shape", "[4, 3]", "[4, 2]");
  EXPECT_CORUN_ERROR(g.mul(a, c, "m"), Status::invalid_argument, "mul", "'m'", "same shape", "[4, 3]", "[4, 2]");
  // Shapes that broadcast (numpy rules) are accepted (tests/unit/test_broadcast_ops.cpp has more).
  EXPECT_EQ(g.sub(a, bias, "sb").shape(), (Shape{4, 3}));
  EXPECT_EQ(g.mul(a, bias, "mb").shape(), (Shape{4, 3}));
}

TEST(GraphErrors, LeakyReluSlopeMustBeFinite) {
  Graph g;
  auto x = g.input("x", {4, 3});
  EXPECT_CORUN_ERROR(g.leaky_relu(x, std::numeric_limits<float>::infinity(), "lr"), Status::invalid_argument,
                     "leaky_relu", "'lr'", "negative slope must be finite");
  EXPECT_CORUN_ERROR(g.leaky_relu(x, std::numeric_limits<float>::quiet_NaN()), Status::invalid_argument,
                     "leaky_relu 'leaky_relu_0'", "finite");
  const Tensor y = g.leaky_relu(x, 0.2f, "ok");
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(g.impl().nodes.back().call.f, 0.2f);  // alpha travels in the call's float attribute
}

TEST(GraphErrors, HardSigmoidAlphaAndBetaMustBeFinite) {
  Graph g;
  auto x = g.input("x", {4, 3});
  EXPECT_CORUN_ERROR(g.hard_sigmoid(x, std::numeric_limits<float>::infinity(), 0.5f, "hs"), Status::invalid_argument,
                     "hard_sigmoid", "'hs'", "alpha and beta must be finite");
  EXPECT_CORUN_ERROR(g.hard_sigmoid(x, 0.2f, std::numeric_limits<float>::quiet_NaN()), Status::invalid_argument,
                     "hard_sigmoid 'hard_sigmoid_0'", "finite");
  const Tensor y = g.hard_sigmoid(x, 1.0f / 6.0f, 0.5f, "ok");
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  // alpha and beta travel as float bits in i[0], i[1], as clip's bounds.
  EXPECT_EQ(corun::codelets::float_attr(g.impl().nodes.back().call, 0), 1.0f / 6.0f);
  EXPECT_EQ(corun::codelets::float_attr(g.impl().nodes.back().call, 1), 0.5f);
}

TEST(GraphErrors, ActivationsKeepTheShapeAndRefuseForeignTensors) {
  Graph g, other;
  auto x = g.input("x", {2, 3, 5});
  EXPECT_EQ(g.gelu(x).shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(g.leaky_relu(x).shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(g.hard_sigmoid(x).shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(g.hard_swish(x).shape(), (Shape{2, 3, 5}));
  auto z = other.input("z", {2});
  EXPECT_CORUN_ERROR(g.gelu(z, "gz"), Status::invalid_argument, "gelu 'gz'", "not a tensor of this graph");
  EXPECT_CORUN_ERROR(g.leaky_relu(Tensor{}, 0.1f, "lz"), Status::invalid_argument, "leaky_relu 'lz'",
                     "not a tensor of this graph");
  EXPECT_CORUN_ERROR(g.hard_swish(z, "hz"), Status::invalid_argument, "hard_swish 'hz'", "not a tensor of this graph");
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

}  // namespace
