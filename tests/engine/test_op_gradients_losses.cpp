// Finite-difference checks of the backward rules of the losses, the cells and the lookups (softmax_xent,
// lstm_cell, embedding, reduce_sum, logistic_xent, phased_gate) and of a composition; fixture in
// op_gradient_fixture.hpp.
#include "op_gradient_fixture.hpp"

#include <gtest/gtest.h>

namespace corun {
namespace {

using test::fill_targets;
using test::OpGradient;

// ---- softmax_xent ----


TEST_F(OpGradient, SoftmaxXentSoftTargets) {
  const Tensor z = param("z", {4, 5}, -2.0f, 2.0f);
  const Tensor t = g_.input("t", {4, 5});
  fill_targets(g_, t, rng_);
  check(g_.softmax_xent(z, t));
}

TEST_F(OpGradient, SoftmaxXentOneHotLargeLogits) {  // logits far from 0 exercise the max-shifted softmax
  const Tensor z = param("z", {3, 6}, -6.0f, 6.0f);
  const Tensor t = g_.input("t", {3, 6});
  for (int r = 0; r < 3; ++r) g_.data(t)[r * 6 + (2 * r + 1) % 6] = 1.0f;
  check(g_.softmax_xent(z, t));
}

TEST_F(OpGradient, SoftmaxXentScaledLoss) {  // dL/dloss != 1 reaches the softmax_xent gradient
  const Tensor z = param("z", {4, 3}, -2.0f, 2.0f);
  const Tensor t = g_.input("t", {4, 3});
  fill_targets(g_, t, rng_);
  check(linear_loss(g_.softmax_xent(z, t)));
}

// ---- lstm_cell: gates [B, 4H] and the previous cell state, B = 3, H = 2 ----

TEST_F(OpGradient, LstmCellHAndC) {  // c feeds the loss directly and through h: both paths summed
  const Tensor z = param("z", {3, 8}, -2.0f, 2.0f);
  const Tensor c = param("c", {3, 2});
  const auto [h1, c1] = g_.lstm_cell(z, c);
  check(g_.add(linear_loss(h1), linear_loss(c1)));
}

TEST_F(OpGradient, LstmCellOnlyH) {  // no gradient reaches c from outside: a zero dC
  const Tensor z = param("z", {3, 8}, -2.0f, 2.0f);
  const Tensor c = param("c", {3, 2});
  check(linear_loss(g_.lstm_cell(z, c).first));
}

TEST_F(OpGradient, LstmCellOnlyC) {  // h unused: a zero dH
  const Tensor z = param("z", {3, 8}, -2.0f, 2.0f);
  const Tensor c = param("c", {3, 2});
  check(linear_loss(g_.lstm_cell(z, c).second));
}

TEST_F(OpGradient, LstmCellTwoSteps) {  // c1 read by the next cell and by the loss, h1 by the loss
  const Tensor z1 = param("z1", {3, 8}, -2.0f, 2.0f);
  const Tensor z2 = param("z2", {3, 8}, -2.0f, 2.0f);
  const Tensor c0 = param("c0", {3, 2});
  const auto [h1, c1] = g_.lstm_cell(z1, c0);
  const auto [h2, c2] = g_.lstm_cell(z2, c1);
  const Tensor l1 = g_.add(linear_loss(h1), linear_loss(c1));
  check(g_.add(l1, g_.add(linear_loss(h2), linear_loss(c2))));
}

// ---- embedding / reduce_sum / logistic_xent ----

TEST_F(OpGradient, EmbeddingRepeatedAndUnusedRows) {  // rows 1 and 4 hit twice (scatter-add), row 5 never
  const Tensor table = param("table", {6, 3});
  const Tensor idx = g_.input("idx", {5});
  const float ids[] = {1, 4, 0, 1, 4};
  std::copy(ids, ids + 5, g_.data(idx));
  const Tensor y = g_.embedding(table, idx);
  ASSERT_EQ(y.shape(), (Shape{5, 3}));
  check(linear_loss(y));
}

TEST_F(OpGradient, EmbeddingTwoLookupsOfOneTable) {  // two embedding_grad contributions to one table
  const Tensor table = param("table", {4, 2});
  const Tensor i1 = g_.input("i1", {2, 1});
  const Tensor i2 = g_.input("i2", {3});
  g_.data(i1)[0] = 3, g_.data(i1)[1] = 0;
  g_.data(i2)[0] = 0, g_.data(i2)[1] = 2, g_.data(i2)[2] = 3;
  check(g_.add(linear_loss(g_.embedding(table, i1)), linear_loss(g_.embedding(table, i2))));
}

TEST_F(OpGradient, ReduceSumScaled) {
  const Tensor x = param("x", {3, 4, 2});
  check(linear_loss(g_.reduce_sum(x, -0.75f)));
}

TEST_F(OpGradient, LogisticXent) {
  const Tensor z = param("z", {6, 1}, -3.0f, 3.0f);
  const Tensor t = input("t", {6, 1}, 0.0f, 1.0f);
  check(g_.logistic_xent(z, t));
}

TEST_F(OpGradient, LogisticXentScaledLoss) {  // dL/dloss != 1 reaches the logistic gradient
  const Tensor z = param("z", {2, 3}, -3.0f, 3.0f);
  const Tensor t = input("t", {2, 3}, 0.0f, 1.0f);
  check(linear_loss(g_.logistic_xent(z, t)));
}

// ---- Phased LSTM step: the time gate mixes the new cell output with the previous state ----

TEST_F(OpGradient, PhasedLstmStep) {  // c' = c + k (c~ - c), h' = h + k (h~ - h); k from the inputs only
  const Tensor z = param("z", {3, 8}, -2.0f, 2.0f);
  const Tensor c = param("c", {3, 2});
  const Tensor h = param("h", {3, 2});
  const Tensor time = input("time", {3}, 0.0f, 10.0f);
  const Tensor tau = input("tau", {2}, 1.0f, 4.0f);
  const Tensor shift = input("shift", {2}, 0.0f, 1.0f);
  const Tensor k = g_.phased_gate(time, tau, shift, 0.6f, 1e-3f);
  const auto [h1, c1] = g_.lstm_cell(z, c);
  const Tensor c2 = g_.add(c, g_.mul(k, g_.sub(c1, c)));
  const Tensor h2 = g_.add(h, g_.mul(k, g_.sub(h1, h)));
  check(g_.add(linear_loss(h2), linear_loss(c2)));
}

TEST_F(OpGradient, PhasedGatePeriodsAndShifts) {  // dL/dtau, dL/ds through every piece of the gate
  // Fixed values whose phases sit at least 0.019 from every kink (0, r_on/2, r_on, 1), farther than the
  // central differences move them (|dphi/dtau| eps <= 0.01), in all three pieces: opening, closing, closed.
  const Tensor time = g_.input("time", {5});
  const Tensor tau = param("tau", {3});
  const Tensor shift = param("shift", {3});
  const float tv[] = {0.7f, 1.9f, 2.6f, 3.4f, 4.4f}, pv[] = {3.7f, 4.3f, 2.1f}, sv[] = {0.15f, 0.9f, 0.4f};
  std::copy(std::begin(tv), std::end(tv), g_.data(time));
  std::copy(std::begin(pv), std::end(pv), g_.data(tau));
  std::copy(std::begin(sv), std::end(sv), g_.data(shift));
  // A large alpha so the closed piece's gradient is checked too (1e-3 would vanish under the tolerance).
  check(linear_loss(g_.phased_gate(time, tau, shift, 0.6f, 0.3f)));
}

TEST_F(OpGradient, PhasedGateOfParameterTimesIsRefused) {  // no gradient w.r.t. the timestamps
  const Tensor time = param("time", {3}, 0.0f, 5.0f);
  const Tensor k = g_.phased_gate(time, input("tau", {2}, 1.0f, 4.0f), input("shift", {2}), 0.5f, 1e-3f);
  EXPECT_THROW(g_.backward(linear_loss(k), {.sgd_update = false}), Error);
}

// ---- compositions: gradient accumulation across ops ----

TEST_F(OpGradient, TwoLayerPerceptron) {
  // A weight in two matmuls (in-place matmul accumulation of its gradient), a bias, relu, tanh and a
  // softmax cross-entropy on top.
  const Tensor x = input("x", {6, 4});
  const Tensor w = param("w", {4, 4}, -0.8f, 0.8f);
  const Tensor b = param("b", {4}, -0.5f, 0.5f);
  const Tensor w2 = param("w2", {4, 3});
  const Tensor h1 = g_.tanh(g_.add(g_.matmul(x, w), b));
  const Tensor h2 = g_.sigmoid(g_.matmul(h1, w));
  const Tensor logits = g_.matmul(g_.concat({g_.slice(h2, 1, 0, 2), g_.slice(h1, 1, 2, 2)}, 1), w2);
  const Tensor t = g_.input("t", {6, 3});
  fill_targets(g_, t, rng_);
  check(g_.add(g_.softmax_xent(logits, t), linear_loss(g_.sub(h1, h2))));
}

}  // namespace
}  // namespace corun
