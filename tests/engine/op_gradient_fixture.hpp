// tests/engine/op_gradient_fixture.hpp — the finite-difference fixture of the test_op_gradients* tests,
// which check the backward rule of every op the Graph builds, run on StarPU.
//
// Each test builds a small graph whose parameters are the op's operands, y = op(params...), and a scalar
// loss = sum(y * R) with R a fixed random input (so dL/dy = R is dense and different everywhere), or
// softmax_xent itself. backward() without SGD updates adds the gradient nodes; the analytic gradients of
// one run are compared with central differences of the loss (each parameter element perturbed with
// Engine::write, the whole graph re-run, the loss read back; differences taken in double).
#pragma once

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

namespace corun::test {


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

  static inline Engine* engine_ = nullptr;
  Graph g_;
  std::mt19937_64 rng_{20240607};
  std::vector<Tensor> params_;
  int nweights_ = 0;
};

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

}  // namespace corun::test
