// Finite-difference check of the backward rule of every op the Graph builds, run on StarPU.
//
// Each test builds a small graph whose parameters are the op's operands, y = op(params...), and a scalar
// loss = sum(y * R) with R a fixed random input (so dL/dy = R is dense and different everywhere), or
// softmax_xent itself. backward() without SGD updates adds the gradient nodes; the analytic gradients of
// one run are compared with central differences of the loss (each parameter element perturbed with
// Engine::write, the whole graph re-run, the loss read back; differences taken in double).
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace corun {
namespace {

using test::fill_uniform;
using test::test_config;

// Gradient checks use one Engine per test process (ctest runs every TEST in its own process; a plain run of
// the executable shares it across tests).
class OpGradient : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { engine_ = new Engine(test_config()); }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(engine_, nullptr) << "the Engine could not be created (see above)"; }

  // A parameter filled with uniform values in [lo, hi).
  Tensor param(const std::string& name, const Shape& s, float lo = -1.0f, float hi = 1.0f) {
    const Tensor p = g_.param(name, s);
    fill_uniform(g_, p, rng_, lo, hi);
    params_.push_back(p);
    return p;
  }

  // An input filled with uniform values in [lo, hi).
  Tensor input(const std::string& name, const Shape& s, float lo = -1.0f, float hi = 1.0f) {
    const Tensor t = g_.input(name, s);
    fill_uniform(g_, t, rng_, lo, hi);
    return t;
  }

  // sum over every element of y * R, R a fresh random input of y's shape: a [1] loss with dL/dy = R.
  Tensor linear_loss(Tensor y) {
    const Tensor r = input("R" + std::to_string(nweights_++), y.shape());
    Tensor z = g_.mul(y, r);
    while (z.shape().rank > 1) z = g_.sum(z, 0);
    return g_.sum(z, 0);
  }

  // Adds the backward of `loss` (no SGD), runs once, and compares every parameter's gradient element with
  // a central difference of step `eps`.
  void check(Tensor loss, double eps = 1e-2) {
    ASSERT_EQ(loss.shape(), Shape{1});
    g_.backward(loss, {.sgd_update = false});
    std::vector<Tensor> grads;
    for (Tensor p : params_) {
      grads.push_back(g_.grad(p));
      ASSERT_TRUE(grads.back().valid()) << "no gradient for parameter " << p.name();
    }
    Engine& eng = *engine_;
    struct Release {  // the shared engine must not outlive its hold on this test's graph
      Engine& e;
      Graph& g;
      ~Release() { e.release(g); }
    } release{eng, g_};

    eng.run(g_);
    const float loss0 = eng.read(g_, loss)[0];
    ASSERT_TRUE(std::isfinite(loss0));
    // Every run recomputes the gradients: read them all before any parameter is perturbed.
    std::vector<std::vector<float>> analytic;
    for (Tensor gr : grads) analytic.push_back(eng.read(g_, gr));
    for (size_t k = 0; k < params_.size(); ++k) {
      const Tensor p = params_[k];
      const std::vector<float>& an = analytic[k];
      std::vector<float> v = eng.read(g_, p);
      const std::vector<float> orig = v;
      double num = 0.0, den = 0.0, worst = 0.0;
      for (size_t e = 0; e < v.size(); ++e) {
        const float plus = static_cast<float>(orig[e] + eps);
        const float minus = static_cast<float>(orig[e] - eps);
        v[e] = plus;
        eng.write(g_, p, v);
        eng.run(g_);
        const double lp = eng.read(g_, loss)[0];
        v[e] = minus;
        eng.write(g_, p, v);
        eng.run(g_);
        const double lm = eng.read(g_, loss)[0];
        v[e] = orig[e];
        // The actual step is what the f32 perturbation represents, not eps itself.
        const double fd = (lp - lm) / (static_cast<double>(plus) - static_cast<double>(minus));
        const double a = an[e];
        const double err = std::abs(fd - a) / std::max(1.0, std::abs(a));
        worst = std::max(worst, err);
        num += (fd - a) * (fd - a);
        den += fd * fd;
        EXPECT_LE(err, kElemTol) << "d loss / d " << p.name() << "[" << e << "]: analytic " << a
                                 << ", finite difference " << fd;
      }
      eng.write(g_, p, orig);
      const double normwise = std::sqrt(num) / std::max(std::sqrt(den), 1e-12);
      EXPECT_LE(normwise, kNormTol) << "gradient of " << p.name() << ": normwise relative error " << normwise;
      if (std::getenv("CORUN_TEST_VERBOSE"))
        std::printf("  %-6s %3zu elems: worst elementwise %.2e, normwise %.2e\n", p.name().c_str(), v.size(), worst,
                    normwise);
    }
  }

  // f32 loss, steps of 1e-2: measured errors are at most 2e-5 elementwise and 5e-5 normwise (print them
  // with CORUN_TEST_VERBOSE=1), so the tolerances leave a ~50x margin while a wrong rule is off by O(1).
  static constexpr double kElemTol = 2e-3;
  static constexpr double kNormTol = 1e-3;

  static Engine* engine_;
  Graph g_;
  std::mt19937_64 rng_{20240607};
  std::vector<Tensor> params_;
  int nweights_ = 0;
};

Engine* OpGradient::engine_ = nullptr;

// ---- matmul: all four transpose combinations; C is [3, 5] with inner dimension 4. ----

class MatmulGradient : public OpGradient, public ::testing::WithParamInterface<std::pair<bool, bool>> {};

TEST_P(MatmulGradient, AllTransposes) {
  const auto [ta, tb] = GetParam();
  const Tensor a = param("a", ta ? Shape{4, 3} : Shape{3, 4});
  const Tensor b = param("b", tb ? Shape{5, 4} : Shape{4, 5});
  const Tensor c = g_.matmul(a, b, ta, tb);
  ASSERT_EQ(c.shape(), (Shape{3, 5}));
  check(linear_loss(c));
}

INSTANTIATE_TEST_SUITE_P(Transposes, MatmulGradient,
                         ::testing::Values(std::pair{false, false}, std::pair{true, false}, std::pair{false, true},
                                           std::pair{true, true}),
                         [](const auto& p) {
                           return std::string(p.param.first ? "At" : "A") + (p.param.second ? "Bt" : "B");
                         });

TEST_F(OpGradient, MatmulSameOperandTwice) {  // C = A^T A: both gradient contributions land on A
  const Tensor a = param("a", {4, 3});
  check(linear_loss(g_.matmul(a, a, true, false)));
}

// ---- add / sub / mul ----

TEST_F(OpGradient, AddSameShape) {
  const Tensor a = param("a", {3, 4});
  const Tensor b = param("b", {3, 4});
  check(linear_loss(g_.add(a, b)));
}

TEST_F(OpGradient, AddBiasBroadcast) {
  const Tensor a = param("a", {5, 4});
  const Tensor b = param("b", {4});
  check(linear_loss(g_.add(a, b)));
}

TEST_F(OpGradient, AddBiasBroadcast3D) {  // bias over the last extent of a 3-D tensor
  const Tensor a = param("a", {2, 3, 4});
  const Tensor b = param("b", {4});
  check(linear_loss(g_.add(a, b)));
}

TEST_F(OpGradient, Sub) {
  const Tensor a = param("a", {3, 4});
  const Tensor b = param("b", {3, 4});
  check(linear_loss(g_.sub(a, b)));
}

TEST_F(OpGradient, Mul) {
  const Tensor a = param("a", {3, 4});
  const Tensor b = param("b", {3, 4});
  check(linear_loss(g_.mul(a, b)));
}

TEST_F(OpGradient, MulSquare) {  // y = a * a: two contributions to one gradient, summed
  const Tensor a = param("a", {3, 4});
  check(linear_loss(g_.mul(a, a)));
}

// ---- elementwise nonlinearities ----

TEST_F(OpGradient, Sigmoid) {
  const Tensor x = param("x", {4, 5}, -2.0f, 2.0f);
  check(linear_loss(g_.sigmoid(x)));
}

TEST_F(OpGradient, Tanh) {
  const Tensor x = param("x", {4, 5}, -2.0f, 2.0f);
  check(linear_loss(g_.tanh(x)));
}

TEST_F(OpGradient, Relu) {
  const Tensor x = param("x", {4, 5});
  // Keep every element at least 0.1 away from the kink (the steps are 1e-2), with both signs present.
  float* d = g_.data(x);
  for (int e = 0; e < 20; ++e) d[e] = (e % 3 == 0 ? -1.0f : 1.0f) * (0.1f + 0.9f * std::abs(d[e]));
  check(linear_loss(g_.relu(x)));
}

// ---- concat / split / slice ----

TEST_F(OpGradient, ConcatDim0TwoOperands) {
  const Tensor a = param("a", {2, 3});
  const Tensor b = param("b", {4, 3});
  const Tensor y = g_.concat({a, b}, 0);
  ASSERT_EQ(y.shape(), (Shape{6, 3}));
  check(linear_loss(y));
}

TEST_F(OpGradient, ConcatDim1ThreeOperands) {
  const Tensor a = param("a", {3, 2});
  const Tensor b = param("b", {3, 1});
  const Tensor c = param("c", {3, 4});
  const Tensor y = g_.concat({a, b, c}, 1);
  ASSERT_EQ(y.shape(), (Shape{3, 7}));
  check(linear_loss(y));
}

TEST_F(OpGradient, ConcatDim1Of3D) {
  const Tensor a = param("a", {2, 1, 3});
  const Tensor b = param("b", {2, 2, 3});
  const Tensor c = param("c", {2, 3, 3});
  check(linear_loss(g_.concat({a, b, c}, 1)));
}

TEST_F(OpGradient, ConcatSameOperandTwice) {
  const Tensor a = param("a", {2, 3});
  check(linear_loss(g_.concat({a, a}, 0)));
}

TEST_F(OpGradient, SplitDim1AllPiecesUsed) {
  const Tensor x = param("x", {3, 6});
  const auto ys = g_.split(x, 1, {2, 3, 1});
  ASSERT_EQ(ys.size(), 3u);
  const Tensor l = g_.add(g_.add(linear_loss(ys[0]), linear_loss(ys[1])), linear_loss(ys[2]));
  check(l);
}

TEST_F(OpGradient, SplitDim0OnePieceUnused) {  // the unused piece's gradient is a zero constant
  const Tensor x = param("x", {5, 3});
  const auto ys = g_.split(x, 0, {1, 3, 1});
  check(g_.add(linear_loss(ys[0]), linear_loss(ys[2])));
}

TEST_F(OpGradient, SliceDim0) {
  const Tensor x = param("x", {5, 4});
  const Tensor y = g_.slice(x, 0, 1, 3);
  ASSERT_EQ(y.shape(), (Shape{3, 4}));
  check(linear_loss(y));
}

TEST_F(OpGradient, SliceDim1) {
  const Tensor x = param("x", {4, 6});
  const Tensor y = g_.slice(x, 1, 2, 3);
  ASSERT_EQ(y.shape(), (Shape{4, 3}));
  check(linear_loss(y));
}

TEST_F(OpGradient, SliceDim1Of3DTwoSlices) {  // two slices of one value (LSTM-style gate blocks)
  const Tensor x = param("x", {2, 5, 3});
  check(g_.add(linear_loss(g_.slice(x, 1, 0, 2)), linear_loss(g_.slice(x, 1, 1, 4))));
}

// ---- sum ----

TEST_F(OpGradient, SumDim0) {
  const Tensor x = param("x", {4, 5});
  const Tensor y = g_.sum(x, 0);
  ASSERT_EQ(y.shape(), Shape{5});
  check(linear_loss(y));
}

TEST_F(OpGradient, SumDim1Scaled) {
  const Tensor x = param("x", {4, 5});
  const Tensor y = g_.sum(x, 1, 0.5f);
  ASSERT_EQ(y.shape(), Shape{4});
  check(linear_loss(y));
}

TEST_F(OpGradient, SumMiddleDimOf3D) {
  const Tensor x = param("x", {2, 3, 4});
  const Tensor y = g_.sum(x, 1, -1.5f);
  ASSERT_EQ(y.shape(), (Shape{2, 4}));
  check(linear_loss(y));
}

TEST_F(OpGradient, SumLastDimOf3D) {
  const Tensor x = param("x", {2, 3, 4});
  check(linear_loss(g_.sum(x, 2)));
}

TEST_F(OpGradient, Sum1D) {  // a 1-D sum gives [1]
  const Tensor x = param("x", {7});
  const Tensor y = g_.sum(x, 0, 2.0f);
  ASSERT_EQ(y.shape(), Shape{1});
  check(linear_loss(y));
}

// ---- softmax_xent ----

// Soft target rows: positive, summing to one.
void fill_targets(Graph& g, Tensor t, std::mt19937_64& rng) {
  fill_uniform(g, t, rng, 0.05f, 1.0f);
  float* d = g.data(t);
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += d[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) d[r * cols + c] = static_cast<float>(d[r * cols + c] / s);
  }
}

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

// ---- conv2d: every parameter of X, W, B checked; stride, padding, 1x1 ----

struct ConvGeometry {
  const char* name;
  int n, c, h, w, k, r, stride, pad;
};

void PrintTo(const ConvGeometry& g, std::ostream* os) { *os << g.name; }  // names, not bytes, in test lists

class ConvGradient : public OpGradient, public ::testing::WithParamInterface<ConvGeometry> {};

TEST_P(ConvGradient, XWB) {
  const ConvGeometry q = GetParam();
  const Tensor x = param("x", {q.n, q.c, q.h, q.w});
  const Tensor w = param("w", {q.k, q.c, q.r, q.r});
  const Tensor b = param("b", {q.k});
  check(linear_loss(g_.conv2d(x, w, b, q.stride, q.pad)));
}

INSTANTIATE_TEST_SUITE_P(Geometries, ConvGradient,
                         ::testing::Values(ConvGeometry{"k3s1p1", 2, 2, 4, 5, 3, 3, 1, 1},
                                           ConvGeometry{"k3s2p0", 2, 2, 5, 5, 2, 3, 2, 0},
                                           ConvGeometry{"k1s1p0", 2, 3, 3, 3, 2, 1, 1, 0},
                                           ConvGeometry{"k5s1p2", 1, 1, 5, 4, 2, 5, 1, 2}),
                         [](const auto& p) { return std::string(p.param.name); });

// ---- pooling: distinct, well separated values so a step of 1e-2 never changes a window's max ----

TEST_F(OpGradient, MaxPoolOverlapping3s2) {
  const Tensor x = param("x", {2, 2, 5, 5});
  float* d = g_.data(x);
  std::vector<int> order(50);
  for (int e = 0; e < 50; ++e) order[static_cast<size_t>(e)] = e;
  std::shuffle(order.begin(), order.end(), rng_);
  for (int e = 0; e < 50; ++e) d[e] = 0.1f * static_cast<float>(order[static_cast<size_t>(e)]) - 2.5f;
  check(linear_loss(g_.max_pool(x, 3, 2)));
}

TEST_F(OpGradient, MaxPoolPadded2s2) {
  const Tensor x = param("x", {1, 2, 5, 4});
  float* d = g_.data(x);
  std::vector<int> order(40);
  for (int e = 0; e < 40; ++e) order[static_cast<size_t>(e)] = e;
  std::shuffle(order.begin(), order.end(), rng_);
  for (int e = 0; e < 40; ++e) d[e] = 0.1f * static_cast<float>(order[static_cast<size_t>(e)]) - 2.0f;
  check(linear_loss(g_.max_pool(x, 2, 2, 1)));
}

TEST_F(OpGradient, AvgPoolOverlapping3s2) {
  const Tensor x = param("x", {2, 2, 5, 5});
  check(linear_loss(g_.avg_pool(x, 3, 2)));
}

TEST_F(OpGradient, AvgPoolPadded3s1) {  // border windows divide by fewer positions
  const Tensor x = param("x", {1, 2, 4, 3});
  check(linear_loss(g_.avg_pool(x, 3, 1, 1)));
}

// ---- add_n / reshape ----

TEST_F(OpGradient, AddNThreeOperandsOneTwice) {
  const Tensor a = param("a", {2, 3, 2, 2});
  const Tensor b = param("b", {2, 3, 2, 2});
  check(linear_loss(g_.add_n({a, b, a})));
}

TEST_F(OpGradient, ReshapeFlatten) {
  const Tensor x = param("x", {2, 3, 2, 2});
  const Tensor y = g_.reshape(x, {2, 12});
  ASSERT_EQ(y.shape(), (Shape{2, 12}));
  check(linear_loss(y));
}

// A small CNN: conv -> avg pool -> conv -> avg pool -> flatten -> dense -> softmax cross-entropy (max
// pooling is checked above on separated values: here near-ties of conv outputs would flip under a step).
TEST_F(OpGradient, SmallCnn) {
  const Tensor x = input("x", {2, 1, 6, 6});
  const Tensor w1 = param("w1", {3, 1, 3, 3}, -0.5f, 0.5f);
  const Tensor b1 = param("b1", {3}, -0.1f, 0.1f);
  const Tensor w2 = param("w2", {2, 3, 3, 3}, -0.5f, 0.5f);
  const Tensor b2 = param("b2", {2}, -0.1f, 0.1f);
  const Tensor wd = param("wd", {8, 3});
  Tensor h = g_.avg_pool(g_.conv2d(x, w1, b1, 1, 1), 2, 2);  // [2,3,3,3]
  h = g_.avg_pool(g_.conv2d(h, w2, b2, 1, 1), 2, 1);         // [2,2,2,2]
  const Tensor logits = g_.matmul(g_.reshape(h, {2, 8}), wd);
  const Tensor t = g_.input("t", {2, 3});
  fill_targets(g_, t, rng_);
  check(g_.softmax_xent(logits, t));
}

}  // namespace
}  // namespace corun
