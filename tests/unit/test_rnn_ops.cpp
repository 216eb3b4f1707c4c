// Builder tests of the recurrent cells and layers (issue 19): gru_cell's shape errors and gradient nodes;
// the ONNX LSTM / GRU layers' output shapes, structure (one input projection per direction, one
// recurrent matmul and one fused cell per step) and their errors for what they do not support.
#include <corun/error.hpp>
#include <corun/graph.hpp>
#include <corun/rnn.hpp>

#include "graphs/graph_impl.hpp"

#include "common/error_matchers.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace corun {
namespace {

int count_nodes(const Graph& g, codelets::OpKind kind) {
  int n = 0;
  for (const auto& node : g.impl().nodes) n += node.call.kind == kind;
  return n;
}

TEST(GruCell, ShapesAndErrors) {
  Graph g;
  const Tensor xp = g.input("xp", {4, 15}), hp = g.input("hp", {4, 15}), h = g.input("h", {4, 5});
  const Tensor h1 = g.gru_cell(xp, hp, h, "cell");
  EXPECT_EQ(h1.shape(), (Shape{4, 5}));
  EXPECT_EQ(g.find("cell.h"), h1);
  EXPECT_CORUN_ERROR(g.gru_cell(xp, hp, g.input("h2", {4, 6})), Status::invalid_argument, "gru_cell",
                     "[batch, 3 * hidden]", "[4, 15]", "[4, 6]");
  EXPECT_CORUN_ERROR(g.gru_cell(xp, g.input("hp2", {4, 12}), h), Status::invalid_argument, "gru_cell",
                     "recurrent projection", "[4, 12]");
  EXPECT_CORUN_ERROR(g.gru_cell(xp, hp, g.input("h3", {20})), Status::invalid_argument, "gru_cell", "2-D");
}

TEST(GruCell, BackwardIsOneFusedNode) {
  Graph g;
  const Tensor xp = g.param("xp", {2, 6}), hp = g.param("hp", {2, 6}), h = g.param("h", {2, 2});
  g.backward(g.reduce_sum(g.gru_cell(xp, hp, h)), {.sgd_update = false});
  EXPECT_EQ(count_nodes(g, codelets::OpKind::gru_cell_grad), 1);
  for (Tensor p : {xp, hp, h}) EXPECT_TRUE(g.grad(p).valid()) << p.name();
}

TEST(RnnLayers, GruBidirectionalStructure) {
  Graph g;
  const int64_t seq = 5, batch = 3, in = 4, H = 6;
  const Tensor x = g.input("x", {seq, batch, in});
  const auto out = rnn::gru(g, x, g.param("w", {2, 3 * H, in}), g.param("r", {2, 3 * H, H}),
                            g.param("b", {2, 6 * H}), g.input("h0", {2, batch, H}),
                            {.direction = rnn::Direction::bidirectional, .name = "bigru"});
  EXPECT_EQ(out.y.shape(), (Shape{seq, 2, batch, H}));
  EXPECT_EQ(out.y_h.shape(), (Shape{2, batch, H}));
  EXPECT_FALSE(out.y_c.valid());
  // Per direction one input projection for all steps plus one recurrent matmul per step.
  EXPECT_EQ(count_nodes(g, codelets::OpKind::matmul), 2 * (1 + seq));
  EXPECT_EQ(count_nodes(g, codelets::OpKind::gru_cell), 2 * seq);
}

TEST(RnnLayers, LstmWithoutInitialStateSkipsTheFirstRecurrentMatmul) {
  Graph g;
  const int64_t seq = 4, batch = 2, in = 3, H = 5;
  const auto out = rnn::lstm(g, g.input("x", {seq, batch, in}), g.param("w", {1, 4 * H, in}),
                             g.param("r", {1, 4 * H, H}), Tensor{}, Tensor{}, Tensor{},
                             {.direction = rnn::Direction::reverse});
  EXPECT_EQ(out.y.shape(), (Shape{seq, 1, batch, H}));
  EXPECT_EQ(out.y_c.shape(), (Shape{1, batch, H}));
  EXPECT_EQ(count_nodes(g, codelets::OpKind::matmul), 1 + (seq - 1));
  EXPECT_EQ(count_nodes(g, codelets::OpKind::lstm_cell), seq);
}

TEST(RnnLayers, ParseDirection) {
  EXPECT_EQ(rnn::parse_direction("forward"), rnn::Direction::forward);
  EXPECT_EQ(rnn::parse_direction("reverse"), rnn::Direction::reverse);
  EXPECT_EQ(rnn::parse_direction("bidirectional"), rnn::Direction::bidirectional);
  EXPECT_CORUN_ERROR(rnn::parse_direction("both"), Status::invalid_argument, "'both'", "bidirectional");
}

TEST(RnnLayers, UnsupportedAttributesAreClearErrors) {
  Graph g;
  const Tensor x = g.input("x", {3, 2, 4});
  const Tensor w = g.param("w", {1, 12, 4}), r = g.param("r", {1, 12, 4});
  const Tensor wl = g.param("wl", {1, 16, 4}), rl = g.param("rl", {1, 16, 4});
  EXPECT_CORUN_ERROR(rnn::gru(g, x, w, r, Tensor{}, Tensor{}, {.linear_before_reset = 0}),
                     Status::invalid_argument, "GRU layer", "linear_before_reset = 0", "only 1");
  EXPECT_CORUN_ERROR(rnn::gru(g, x, w, r, Tensor{}, Tensor{}, {.activations = {"Relu", "Tanh"}}),
                     Status::invalid_argument, "activations [Relu, Tanh]", "Sigmoid, Tanh");
  EXPECT_CORUN_ERROR(rnn::gru(g, x, w, r, Tensor{}, Tensor{}, {.clip = 3.0f}), Status::invalid_argument, "clip");
  EXPECT_CORUN_ERROR(rnn::lstm(g, x, wl, rl, Tensor{}, Tensor{}, Tensor{}, {.peepholes = g.param("p", {1, 12})}),
                     Status::invalid_argument, "LSTM layer", "peepholes");
  EXPECT_CORUN_ERROR(rnn::lstm(g, x, wl, rl, Tensor{}, Tensor{}, Tensor{}, {.input_forget = 1}),
                     Status::invalid_argument, "input_forget");
  EXPECT_CORUN_ERROR(rnn::lstm(g, x, wl, rl, Tensor{}, Tensor{}, Tensor{}, {.layout = 1}), Status::invalid_argument,
                     "layout = 1");
  EXPECT_CORUN_ERROR(rnn::lstm(g, x, wl, rl, Tensor{}, Tensor{}, Tensor{}, {.sequence_lens = g.input("sl", {2})}),
                     Status::invalid_argument, "sequence_lens");
  // The defaults spelled out, and an infinite clip, are accepted.
  const auto ok = rnn::gru(g, x, w, r, Tensor{}, Tensor{},
                           {.activations = {"Sigmoid", "Tanh"}, .clip = std::numeric_limits<float>::infinity()});
  EXPECT_EQ(ok.y_h.shape(), (Shape{1, 2, 4}));
}

TEST(RnnLayers, ShapeErrorsNameTheOperand) {
  Graph g;
  const Tensor x = g.input("x", {3, 2, 4});
  const Tensor r = g.param("r", {2, 12, 4});
  EXPECT_CORUN_ERROR(rnn::gru(g, x, g.param("w", {2, 12, 5}), r, Tensor{}, Tensor{},
                              {.direction = rnn::Direction::bidirectional}),
                     Status::invalid_argument, "GRU layer", "W must be [2, 12, 4]", "[2, 12, 5]");
  EXPECT_CORUN_ERROR(rnn::gru(g, x, g.param("w1", {1, 12, 4}), r, Tensor{}, Tensor{}), Status::invalid_argument,
                     "R must be [1, 12, 4]", "[2, 12, 4]");  // a forward layer: one direction
  EXPECT_CORUN_ERROR(rnn::gru(g, x, g.param("w2", {2, 12, 4}), r, g.param("b", {2, 12}), Tensor{},
                              {.direction = rnn::Direction::bidirectional}),
                     Status::invalid_argument, "B must be [2, 24]");
  EXPECT_CORUN_ERROR(rnn::gru(g, x, g.param("w3", {2, 12, 4}), r, Tensor{}, g.input("h0", {2, 3, 3}),
                              {.direction = rnn::Direction::bidirectional}),
                     Status::invalid_argument, "initial_h must be [2, 2, 4]");
  EXPECT_CORUN_ERROR(rnn::gru(g, g.input("x2", {6, 4}), g.param("w4", {2, 12, 4}), r, Tensor{}, Tensor{}),
                     Status::invalid_argument, "X must be 3-D");
}

}  // namespace
}  // namespace corun
