// Finite-difference checks of the recurrent cells and layers (issue 19): gru_cell's backward rule, and the
// ONNX LSTM / GRU layer builders (corun/rnn.hpp) end to end, bidirectional, with biases and initial states,
// so the gradients reach X, W, R, B and the initial states through the gate reordering slices, the shared
// input projection, the per-step slices and the output concatenations. Fixture in op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <corun/rnn.hpp>

#include <gtest/gtest.h>

namespace corun {
namespace {

using test::OpGradient;

// ---- gru_cell: projections [B, 3H] and the previous hidden state, B = 3, H = 5 ----

TEST_F(OpGradient, GruCellAllInputs) {
  const Tensor xp = param("xp", {3, 15}, -2.0f, 2.0f);
  const Tensor hp = param("hp", {3, 15}, -2.0f, 2.0f);
  const Tensor h = param("h", {3, 5});
  const Tensor h1 = g_.gru_cell(xp, hp, h, "cell");
  ASSERT_EQ(h1.shape(), (Shape{3, 5}));
  check(linear_loss(h1));
}

TEST_F(OpGradient, GruCellTwoStepsSharedState) {  // h feeds the next step directly and through its projection
  const Tensor xp0 = param("xp0", {2, 9});
  const Tensor xp1 = param("xp1", {2, 9});
  const Tensor r = param("r", {9, 3});
  const Tensor h0 = param("h0", {2, 3});
  const Tensor h1 = g_.gru_cell(xp0, g_.matmul(h0, r, false, true), h0);
  const Tensor h2 = g_.gru_cell(xp1, g_.matmul(h1, r, false, true), h1);
  check(linear_loss(h2));
}

// ---- the ONNX layers, kept tiny (every parameter element costs two runs of the whole unrolled graph);
// test_rnn_torch checks larger layers against PyTorch where python3-torch is installed ----

TEST_F(OpGradient, GruLayerBidirectional) {
  const Tensor x = param("x", {2, 1, 2});
  const Tensor w = param("w", {2, 6, 2});
  const Tensor r = param("r", {2, 6, 2});
  const Tensor b = param("b", {2, 12});
  const Tensor h0 = param("h0", {2, 1, 2});
  const auto out = rnn::gru(g_, x, w, r, b, h0, {.direction = rnn::Direction::bidirectional});
  ASSERT_EQ(out.y.shape(), (Shape{2, 2, 1, 2}));
  check(g_.add(linear_loss(out.y), linear_loss(out.y_h)));
}

TEST_F(OpGradient, GruLayerReverseWithoutBiasOrState) {
  const Tensor x = param("x", {3, 1, 2});
  const Tensor w = param("w", {1, 6, 2});
  const Tensor r = param("r", {1, 6, 2});
  const auto out = rnn::gru(g_, x, w, r, Tensor{}, Tensor{}, {.direction = rnn::Direction::reverse});
  check(linear_loss(out.y));
}

TEST_F(OpGradient, LstmLayerBidirectional) {
  const Tensor x = param("x", {2, 1, 2});
  const Tensor w = param("w", {2, 4, 2});  // hidden 1: every gate block is one row, reordered i, o, f, c -> i, f, g, o
  const Tensor r = param("r", {2, 4, 1});
  const Tensor b = param("b", {2, 8});
  const Tensor h0 = input("h0", {2, 1, 1});  // its (tiny, ~0.02) gradient is checked in LstmLayerForwardWithStates
  const Tensor c0 = param("c0", {2, 1, 1});
  const auto out = rnn::lstm(g_, x, w, r, b, h0, c0, {.direction = rnn::Direction::bidirectional});
  ASSERT_EQ(out.y_c.shape(), (Shape{2, 1, 1}));
  check(g_.add(g_.add(linear_loss(out.y), linear_loss(out.y_h)), linear_loss(out.y_c)));
}

TEST_F(OpGradient, LstmLayerForwardWithoutBiasOrState) {
  const Tensor x = param("x", {2, 1, 2});
  const Tensor w = param("w", {1, 8, 2});
  const Tensor r = param("r", {1, 8, 2});
  const auto out = rnn::lstm(g_, x, w, r, Tensor{}, Tensor{}, Tensor{});
  check(g_.add(linear_loss(out.y_h), linear_loss(out.y_c)));
}

TEST_F(OpGradient, LstmLayerForwardWithStates) {
  const Tensor x = input("x", {2, 1, 2});
  const Tensor w = input("w", {1, 8, 2});
  const Tensor r = param("r", {1, 8, 2}, -2.0f, 2.0f);
  const Tensor h0 = param("h0", {1, 1, 2});
  const Tensor c0 = param("c0", {1, 1, 2});
  const auto out = rnn::lstm(g_, x, w, r, Tensor{}, h0, c0);
  check(g_.add(linear_loss(out.y), linear_loss(out.y_c)));
}

}  // namespace
}  // namespace corun
