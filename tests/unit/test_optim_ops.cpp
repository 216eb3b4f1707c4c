// The issue 19 optimizers: each update kernel against PyTorch's torch.optim formula evaluated in double over
// several steps, the graph nodes and state backward() makes for them, and the learning-rate schedules.
#include <corun/graph.hpp>

#include "cli/lr_schedule.hpp"
#include "codelets/adam/adam.hpp"
#include "codelets/sgd_wd/sgd_wd.hpp"
#include "graph_test_mlp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

namespace corun {
namespace {

using codelets::OpCall;
using codelets::OpKind;

constexpr int kSteps = 6;
constexpr int64_t kN = 37;

std::vector<float> uniform(uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(kN);
  for (float& x : v) x = d(rng);
  return v;
}

// torch.optim.Adam / AdamW (amsgrad off), in double: the same steps as torch/optim/adam.py's single-tensor path.
struct AdamDouble {
  double lr, b1, b2, eps, wd;
  bool decoupled;
  std::vector<double> w, m, v;
  void step(const std::vector<float>& grad, int t, double rate) {
    for (size_t e = 0; e < w.size(); ++e) {
      double g = grad[e];
      if (decoupled) w[e] *= 1.0 - rate * wd;
      else g += wd * w[e];
      m[e] = b1 * m[e] + (1.0 - b1) * g;
      v[e] = b2 * v[e] + (1.0 - b2) * g * g;
      const double step_size = rate / (1.0 - std::pow(b1, t));
      const double denom = std::sqrt(v[e]) / std::sqrt(1.0 - std::pow(b2, t)) + eps;
      w[e] -= step_size * m[e] / denom;
    }
  }
};

// Runs the fast kernel as a team of 3 (the reference kernel at width 1 too) for kSteps steps with a new
// gradient and a scheduled rate every step; compares W, M, V with the double formula.
void check_adam(bool decoupled, float wd) {
  const codelets::AdamAttrs a{0.9f, 0.999f, 1e-8f, wd, decoupled};
  OpCall call;
  call.kind = OpKind::adam;
  const Shape s{kN};
  call.shapes = {s, s, s, s, Shape{codelets::kHyperCount}};
  call.i = codelets::adam_encode(a);
  for (codelets::Kernel k : {&codelets::adam_fast, &codelets::adam_ref}) {
    std::vector<float> w = uniform(1, -1.0f, 1.0f), m(kN, 0.0f), v(kN, 0.0f), h(codelets::kHyperCount);
    AdamDouble ref{0, 0.9, 0.999, 1e-8, wd, decoupled, {w.begin(), w.end()}, std::vector<double>(kN), std::vector<double>(kN)};
    for (int t = 1; t <= kSteps; ++t) {
      const std::vector<float> g = uniform(100u + static_cast<uint32_t>(t), -2.0f, 2.0f);
      const float rate = 0.01f * static_cast<float>(t);  // a schedule: a new rate every step
      codelets::fill_optimizer_hyper(h.data(), t, rate, 0.9, 0.999);
      float* buf[] = {w.data(), m.data(), v.data(), const_cast<float*>(g.data()), h.data()};
      for (int rank = 0; rank < 3; ++rank) k(call, buf, rank, 3);
      ref.step(g, t, rate);
    }
    for (int64_t e = 0; e < kN; ++e) {
      EXPECT_NEAR(w[e], ref.w[e], 1e-5 * (1.0 + std::fabs(ref.w[e]))) << "element " << e;
      EXPECT_NEAR(m[e], ref.m[e], 1e-5 * (1.0 + std::fabs(ref.m[e]))) << "element " << e;
      EXPECT_NEAR(v[e], ref.v[e], 1e-5 * (1.0 + std::fabs(ref.v[e]))) << "element " << e;
    }
  }
}

TEST(OptimKernels, AdamMatchesTorchFormula) { check_adam(false, 0.0f); }
TEST(OptimKernels, AdamL2MatchesTorchFormula) { check_adam(false, 0.05f); }
TEST(OptimKernels, AdamWMatchesTorchFormula) { check_adam(true, 0.1f); }

// torch.optim.SGD(momentum, weight_decay, nesterov, dampening 0) in double.
void check_sgd_wd(float mu, float wd, bool nesterov) {
  OpCall call;
  call.kind = OpKind::sgd_wd;
  const Shape s{kN};
  call.shapes = {s, s, s, Shape{codelets::kHyperCount}};
  call.i = codelets::sgd_wd_encode(mu, wd, nesterov);
  for (codelets::Kernel k : {&codelets::sgd_wd_fast, &codelets::sgd_wd_ref}) {
    std::vector<float> w = uniform(2, -1.0f, 1.0f), v(kN, 0.0f), h(codelets::kHyperCount);
    std::vector<double> rw(w.begin(), w.end()), rv(kN, 0.0);
    for (int t = 1; t <= kSteps; ++t) {
      const std::vector<float> g = uniform(200u + static_cast<uint32_t>(t), -2.0f, 2.0f);
      const float rate = 0.1f / static_cast<float>(t);
      codelets::fill_optimizer_hyper(h.data(), t, rate, 0.0, 0.0);
      float* buf[] = {w.data(), v.data(), const_cast<float*>(g.data()), h.data()};
      for (int rank = 0; rank < 4; ++rank) k(call, buf, rank, 4);
      for (int64_t e = 0; e < kN; ++e) {
        const double d = g[e] + static_cast<double>(wd) * rw[e];
        rv[e] = t == 1 ? d : mu * rv[e] + d;  // torch: the first step's buffer is a clone of d_p
        rw[e] -= static_cast<double>(rate) * (nesterov ? d + mu * rv[e] : rv[e]);
      }
    }
    for (int64_t e = 0; e < kN; ++e) {
      EXPECT_NEAR(w[e], rw[e], 1e-5 * (1.0 + std::fabs(rw[e]))) << "element " << e;
      EXPECT_NEAR(v[e], rv[e], 1e-5 * (1.0 + std::fabs(rv[e]))) << "element " << e;
    }
  }
}

TEST(OptimKernels, SgdWeightDecayMatchesTorchFormula) { check_sgd_wd(0.9f, 0.01f, false); }
TEST(OptimKernels, SgdNesterovMatchesTorchFormula) { check_sgd_wd(0.9f, 0.0f, true); }
TEST(OptimKernels, SgdWeightDecayNoMomentumMatchesTorchFormula) { check_sgd_wd(0.0f, 0.1f, false); }

TEST(OptimGraph, AdamMakesMomentsHyperAndOneNodePerParameter) {
  test::Mlp m;
  m.g.backward(m.loss, {.learning_rate = 0.001f, .optimizer = Optimizer::adamw, .weight_decay = 0.01f});
  const Tensor h = m.g.optimizer_hyper();
  ASSERT_TRUE(h.valid());
  EXPECT_EQ(h.name(), "optimizer.hyper");
  std::vector<std::string> state;
  for (Tensor t : m.g.optimizer_state()) state.push_back(t.name());
  EXPECT_EQ(state, (std::vector<std::string>{"optimizer.hyper", "w.adam_m", "w.adam_v", "b.adam_m", "b.adam_v",
                                             "v.adam_m", "v.adam_v", "c.adam_m", "c.adam_v"}));
  // Step 1 at the backward's rate until the caller writes another step.
  const float* hv = m.g.data(h);
  EXPECT_FLOAT_EQ(hv[codelets::kHyperLr], 0.001f);
  EXPECT_EQ(hv[codelets::kHyperStepSize], static_cast<float>(static_cast<double>(0.001f) / (1.0 - static_cast<double>(0.9f))));
  EXPECT_FLOAT_EQ(hv[codelets::kHyperStep], 1.0f);
  // The betas are the options' floats, widened: (double)0.999f, not 0.999.
  const double b1 = 0.9f, b2 = 0.999f, lr = 0.002f;
  const std::vector<float> h3 = m.g.optimizer_hyper_at(3, 0.002f);
  EXPECT_EQ(h3[codelets::kHyperStepSize], static_cast<float>(lr / (1.0 - std::pow(b1, 3))));
  EXPECT_EQ(h3[codelets::kHyperBias2Sqrt], static_cast<float>(std::sqrt(1.0 - std::pow(b2, 3))));
  EXPECT_FLOAT_EQ(h3[codelets::kHyperStep], 3.0f);
}

TEST(OptimGraph, PlainSgdAndMomentumKeepTheirNodes) {
  test::Mlp a;
  a.g.backward(a.loss, {.momentum = 0.9f});
  EXPECT_FALSE(a.g.optimizer_hyper().valid());
  test::Mlp b;
  b.g.backward(b.loss, {.momentum = 0.9f, .weight_decay = 1e-4f, .nesterov = true});
  EXPECT_TRUE(b.g.optimizer_hyper().valid());
  EXPECT_EQ(b.g.optimizer_state().size(), 5u);  // hyper + 4 velocities
}

TEST(OptimGraph, BadOptionsNameTheOption) {
  const auto message = [](BackwardOptions o) {
    test::Mlp m;
    try {
      m.g.backward(m.loss, o);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.optimizer = Optimizer::adam, .beta1 = 1.0f}).find("beta1"), std::string::npos);
  EXPECT_NE(message({.optimizer = Optimizer::adam, .eps = 0.0f}).find("eps"), std::string::npos);
  EXPECT_NE(message({.weight_decay = -1.0f}).find("weight_decay"), std::string::npos);
  EXPECT_NE(message({.nesterov = true}).find("nesterov"), std::string::npos);
  EXPECT_NE(message({.momentum = 0.9f, .optimizer = Optimizer::adam}).find("beta1"), std::string::npos);
}

TEST(LrSchedule, ValuesAtChosenIterations) {
  LrSchedule c = LrSchedule::parse("constant");
  EXPECT_EQ(c.at(0.1f, 0, 100), 0.1f);
  EXPECT_EQ(c.at(0.1f, 99, 100), 0.1f);
  const LrSchedule st = LrSchedule::parse("step:10:0.5");
  EXPECT_EQ(st.at(0.8f, 9, 100), 0.8f);
  EXPECT_EQ(st.at(0.8f, 10, 100), 0.4f);
  EXPECT_EQ(st.at(0.8f, 35, 100), 0.1f);
  const LrSchedule cos = LrSchedule::parse("cosine:0.01");
  EXPECT_EQ(cos.at(1.0f, 0, 100), 1.0f);
  EXPECT_FLOAT_EQ(cos.at(1.0f, 50, 100), 0.505f);
  EXPECT_FLOAT_EQ(cos.at(1.0f, 100, 100), 0.01f);
  EXPECT_EQ(cos.str(), "cosine:0.01");
  // Warm-up first: the CNN sessions' expression, then the schedule's clock starts at 0.
  LrSchedule w = LrSchedule::parse("step:10:0.5");
  w.warmup = 4;
  EXPECT_EQ(w.at(0.01f, 0, 100), 0.01f * 1.0f / 4.0f);
  EXPECT_EQ(w.at(0.01f, 3, 100), 0.01f * 4.0f / 4.0f);
  EXPECT_EQ(w.at(0.01f, 4, 100), 0.01f);
  EXPECT_EQ(w.at(0.01f, 14, 100), 0.005f);
}

TEST(LrSchedule, BadTextsSayTheForms) {
  for (const char* bad : {"", "linear", "step", "step:0:0.5", "step:10", "step:10:2", "step:1.5:0.5", "cosine:-1",
                          "cosine:x"}) {
    try {
      LrSchedule::parse(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("step:N:GAMMA"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace corun
