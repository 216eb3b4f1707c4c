// The converters of issue 19's ops on ModelProtos written in C++ (no torch): each family's numbers against
// the ONNX definition computed here, its attribute forms, and a refusal of what it does not support.
// BatchNormalization, broadcasting arithmetic, unary math and Clip, reductions and GlobalAveragePool,
// LayerNormalization, LSTM and GRU.
#include "onnx_test_helpers.hpp"

#include <corun/error.hpp>
#include <corun/inline.hpp>
#include <corun/onnx.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace corun {
namespace {

using testing::OnnxModelBuilder;

using testing::error_of;
using testing::import;
using testing::run;

float sigmoid(float v) {
  return 1.0f / (1.0f + std::exp(-v));
}

// x [2, 2, 1, 2] -> BatchNormalization (scale, B, mean, var initializers [2]) -> y.
OnnxModelBuilder batch_norm_model() {
  OnnxModelBuilder b;
  b.input("x", {2, 2, 1, 2});
  b.init("bn.weight", {2}, {2.0f, 0.5f});
  b.init("bn.bias", {2}, {1.0f, -1.0f});
  b.init("bn.running_mean", {2}, {1.0f, 3.0f});
  b.init("bn.running_var", {2}, {4.0f, 0.25f});
  auto* n =
      b.node("BatchNormalization", {"x", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"y"}, "bn");
  OnnxModelBuilder::attr(n, "epsilon", 0.0f);
  OnnxModelBuilder::attr(n, "momentum", 0.75f);
  b.output("y", {2, 2, 1, 2});
  return b;
}
const std::vector<float> kBnX = {1, 3, 2, 4, 5, 7, 6, 8};  // channel 0: 1 3 5 7, channel 1: 2 4 6 8

TEST(OnnxBatchNorm, InferenceNormalisesWithTheFileRunningStatisticsHeldAsState) {
  OnnxModel m = import(batch_norm_model());
  for (Tensor p : m.graph.params()) EXPECT_EQ(p.name().find("running"), std::string::npos) << p.name();
  EXPECT_EQ(m.graph.kind(m.graph.find("bn.running_mean")), ValueKind::state);
  const std::vector<float> y = run(m, kBnX, "y");
  const float mean[2] = {1, 3}, sd[2] = {2, 0.5f}, scale[2] = {2, 0.5f}, bias[2] = {1, -1};
  for (int i = 0; i < 8; ++i) {
    const int ch = (i / 2) % 2;
    EXPECT_NEAR(y[i], scale[ch] * (kBnX[i] - mean[ch]) / sd[ch] + bias[ch], 1e-5) << i;
  }
}

TEST(OnnxBatchNorm, ATrainingImportUsesBatchStatisticsAndUpdatesTheRunningOnes) {
  OnnxImportOptions o;
  o.training = true;
  OnnxModel m = import(batch_norm_model(), o);
  const std::vector<float> y = run(m, kBnX, "y");
  // Channel 0 holds 1 3 5 7: mean 4, biased variance 5; channel 1: mean 5, variance 5.
  const float mean[2] = {4, 5}, scale[2] = {2, 0.5f}, bias[2] = {1, -1};
  for (int i = 0; i < 8; ++i) {
    const int ch = (i / 2) % 2;
    EXPECT_NEAR(y[i], scale[ch] * (kBnX[i] - mean[ch]) / std::sqrt(5.0f) + bias[ch], 1e-5) << i;
  }
  // running = momentum * running + (1 - momentum) * batch, the unbiased variance (20 / 3) for var.
  const float* rm = m.graph.data(m.graph.find("bn.running_mean"));
  const float* rv = m.graph.data(m.graph.find("bn.running_var"));
  EXPECT_NEAR(rm[0], 0.75f * 1 + 0.25f * 4, 1e-5);
  EXPECT_NEAR(rm[1], 0.75f * 3 + 0.25f * 5, 1e-5);
  EXPECT_NEAR(rv[0], 0.75f * 4 + 0.25f * 20 / 3.0f, 1e-5);
  EXPECT_NEAR(rv[1], 0.75f * 0.25f + 0.25f * 20 / 3.0f, 1e-5);
}

TEST(OnnxBatchNorm, ComputedRunningStatisticsAreRefused) {
  OnnxModelBuilder b;
  b.input("x", {2, 2});
  b.input("mean", {2});
  b.init("s", {2}, {1, 1});
  b.init("bias", {2}, {0, 0});
  b.init("var", {2}, {1, 1});
  b.node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y"}, "bn");
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("'bn'"), std::string::npos) << e;
  EXPECT_NE(e.find("initializer"), std::string::npos) << e;
}

TEST(OnnxBinary, BroadcastsLikeNumpyAndTakesScalarConstants) {
  OnnxModelBuilder b;
  b.input("x", {2, 3, 2});
  b.init("col", {3, 1}, {10, 20, 30});
  b.init("two", {}, {2.0f});
  b.init("row", {1, 2}, {1, -1});
  b.node("Add", {"x", "col"}, {"a"});
  b.node("Div", {"a", "two"}, {"d"});
  b.node("Pow", {"d", "two"}, {"p"});
  b.node("Sub", {"row", "p"}, {"s"});
  b.node("Mul", {"s", "row"}, {"y"});
  b.output("y", {2, 3, 2});
  OnnxModel m = import(b);
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i) - 5;
  const std::vector<float> y = run(m, x, "y");
  const float col[3] = {10, 20, 30}, row[2] = {1, -1};
  for (int i = 0; i < 12; ++i) {
    const float d = (x[i] + col[(i / 2) % 3]) / 2, r = row[i % 2];
    EXPECT_NEAR(y[i], (r - d * d) * r, 1e-3) << i;
  }
}

TEST(OnnxUnary, EachOpComputesItsFunctionAndClipTakesConstantBounds) {
  OnnxModelBuilder b;
  b.input("x", {6});
  const char* ops[] = {"Sqrt", "Erf", "Exp", "Log", "Neg", "Abs", "Reciprocal"};
  for (const char* op : ops) {
    b.node("Abs", {"x"}, {std::string(op) + ".in"});  // positive inputs: Sqrt and Log stay in their domain
    b.node(op, {std::string(op) + ".in"}, {std::string(op) + ".out"});
    b.output(std::string(op) + ".out", {6});
  }
  b.init("zero", {}, {0.0f});
  b.init("six", {}, {6.0f});
  b.node("Clip", {"x", "zero", "six"}, {"relu6"});
  b.node("Clip", {"x", "", "zero"}, {"below"});
  b.output("relu6", {6});
  b.output("below", {6});
  OnnxModel m = import(b);
  const std::vector<float> x = {-7, -0.5f, 0.25f, 1, 3, 9};
  std::copy(x.begin(), x.end(), m.graph.data(m.inputs[0]));
  InlineRunner runner(m.graph);
  runner.run();
  auto out = [&](const std::string& n, int i) { return m.graph.data(m.graph.find(n))[i]; };
  for (int i = 0; i < 6; ++i) {
    const double a = std::fabs(x[i]);
    EXPECT_NEAR(out("Sqrt.out", i), std::sqrt(a), 1e-5);
    EXPECT_NEAR(out("Erf.out", i), std::erf(a), 1e-5);
    EXPECT_NEAR(out("Exp.out", i), std::exp(a), 1e-5 * std::exp(a));
    EXPECT_NEAR(out("Log.out", i), std::log(a), 1e-5);
    EXPECT_NEAR(out("Neg.out", i), -a, 0);
    EXPECT_NEAR(out("Abs.out", i), a, 0);
    EXPECT_NEAR(out("Reciprocal.out", i), 1 / a, 1e-5);
    EXPECT_EQ(out("relu6", i), std::min(std::max(x[i], 0.0f), 6.0f));
    EXPECT_EQ(out("below", i), std::min(x[i], 0.0f));
  }
}

TEST(OnnxUnary, AClipBoundComputedAtRunTimeIsRefused) {
  OnnxModelBuilder b;
  b.input("x", {3});
  b.input("lo", {1});
  b.node("Clip", {"x", "lo"}, {"y"}, "clamp");
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("'clamp'"), std::string::npos) << e;
  EXPECT_NE(e.find("min"), std::string::npos) << e;
}

// HardSigmoid with ONNX's default alpha and beta and with PyTorch's, and HardSwish (opset 14), against the
// ONNX definitions; the kinks -3 and 3 of PyTorch's pair are among the inputs.
TEST(OnnxUnary, HardSigmoidAndHardSwishComputeTheirDefinitions) {
  OnnxModelBuilder b(14);
  b.input("x", {8});
  b.node("HardSigmoid", {"x"}, {"hsig_default"});
  auto* torch_hsig = b.node("HardSigmoid", {"x"}, {"hsig_torch"});
  OnnxModelBuilder::attr(torch_hsig, "alpha", 1.0f / 6.0f);
  OnnxModelBuilder::attr(torch_hsig, "beta", 0.5f);
  b.node("HardSwish", {"x"}, {"hswish"});
  for (const char* out : {"hsig_default", "hsig_torch", "hswish"}) b.output(out, {8});
  OnnxModel m = import(b);
  const std::vector<float> x = {-7, -3, -2.5f, -1, 0.25f, 2, 3, 9};
  std::copy(x.begin(), x.end(), m.graph.data(m.inputs[0]));
  InlineRunner runner(m.graph);
  runner.run();
  auto out = [&](const std::string& n, int i) { return m.graph.data(m.graph.find(n))[i]; };
  auto hsig = [](double v, double alpha, double beta) { return std::max(0.0, std::min(1.0, alpha * v + beta)); };
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(out("hsig_default", i), hsig(x[i], 0.2, 0.5), 1e-6) << x[i];
    EXPECT_NEAR(out("hsig_torch", i), hsig(x[i], 1.0 / 6.0, 0.5), 1e-6) << x[i];
    EXPECT_NEAR(out("hswish", i), x[i] * hsig(x[i], 1.0 / 6.0, 0.5), 1e-6) << x[i];
  }
}

TEST(OnnxUnary, AnInfiniteHardSigmoidAlphaIsRefusedNamingTheNode) {
  OnnxModelBuilder b;
  b.input("x", {3});
  auto* n = b.node("HardSigmoid", {"x"}, {"y"}, "gate");
  OnnxModelBuilder::attr(n, "alpha", std::numeric_limits<float>::infinity());
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("'gate'"), std::string::npos) << e;
  EXPECT_NE(e.find("alpha"), std::string::npos) << e;
}

TEST(OnnxReduce, AxesFromTheAttributeOrTheInputAndGlobalAveragePool) {
  OnnxModelBuilder b;
  b.input("x", {2, 2, 1, 3});
  auto* mean = b.node("ReduceMean", {"x"}, {"mean"});
  OnnxModelBuilder::attr(mean, "axes", std::vector<int64_t>{1});
  OnnxModelBuilder::attr(mean, "keepdims", int64_t{0});
  b.init_ints("last", {-1});
  b.node("ReduceSum", {"x", "last"}, {"sum"});
  b.node("GlobalAveragePool", {"x"}, {"gap"});
  b.output("mean", {2, 1, 3});
  b.output("sum", {2, 2, 1, 1});
  b.output("gap", {2, 2, 1, 1});
  OnnxModel m = import(b);
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i * i % 7);
  std::copy(x.begin(), x.end(), m.graph.data(m.inputs[0]));
  InlineRunner runner(m.graph);
  runner.run();
  const float* mn = m.graph.data(m.graph.find("mean"));
  const float* sm = m.graph.data(m.graph.find("sum"));
  const float* gp = m.graph.data(m.graph.find("gap"));
  for (int n = 0; n < 2; ++n)
    for (int w = 0; w < 3; ++w) EXPECT_NEAR(mn[n * 3 + w], (x[n * 6 + w] + x[n * 6 + 3 + w]) / 2, 1e-5);
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(sm[r], x[r * 3] + x[r * 3 + 1] + x[r * 3 + 2], 1e-5);
    EXPECT_NEAR(gp[r], sm[r] / 3, 1e-5);
  }
}

TEST(OnnxLayerNorm, NormalisesFromTheAxisWithOrWithoutBias) {
  OnnxModelBuilder b(17);
  b.input("x", {2, 4});
  b.init("g", {4}, {1, 2, 0.5f, -1});
  b.init("beta", {4}, {0, 1, 2, 3});
  auto* n = b.node("LayerNormalization", {"x", "g", "beta"}, {"y"});
  OnnxModelBuilder::attr(n, "epsilon", 1e-3f);
  b.node("LayerNormalization", {"x", "g"}, {"y_nobias"});
  b.output("y", {2, 4});
  b.output("y_nobias", {2, 4});
  OnnxModel m = import(b);
  const std::vector<float> x = {1, 2, 3, 6, -1, 0, 4, 1};
  std::copy(x.begin(), x.end(), m.graph.data(m.inputs[0]));
  InlineRunner runner(m.graph);
  runner.run();
  const float g[4] = {1, 2, 0.5f, -1}, beta[4] = {0, 1, 2, 3};
  const float* y = m.graph.data(m.graph.find("y"));
  const float* y0 = m.graph.data(m.graph.find("y_nobias"));
  for (int r = 0; r < 2; ++r) {
    double mu = 0, var = 0;
    for (int k = 0; k < 4; ++k) mu += x[r * 4 + k] / 4.0;
    for (int k = 0; k < 4; ++k) var += (x[r * 4 + k] - mu) * (x[r * 4 + k] - mu) / 4.0;
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR(y[r * 4 + k], (x[r * 4 + k] - mu) / std::sqrt(var + 1e-3) * g[k] + beta[k], 1e-4);
      EXPECT_NEAR(y0[r * 4 + k], (x[r * 4 + k] - mu) / std::sqrt(var + 1e-5) * g[k], 1e-4);
    }
  }
}

// One step, batch 1, input 1, hidden 1: the gate formulas written out.
TEST(OnnxRnn, OneStepLstmAndGruComputeTheOnnxGates) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 1});
  b.init("lw", {1, 4, 1}, {0.5f, -1, 2, 1.5f});  // gates i, o, f, c
  b.init("lr", {1, 4, 1}, {1, 1, 1, 1});
  b.init("lb", {1, 8}, {0.1f, 0.2f, 0.3f, 0.4f, 0, 0, 0, -0.1f});
  b.node("LSTM", {"x", "lw", "lr", "lb"}, {"ly", "lh", "lc"});
  b.init("gw", {1, 3, 1}, {0.5f, -1, 2});  // gates z, r, h
  b.init("gr", {1, 3, 1}, {1, 1, 1});
  b.init("gb", {1, 6}, {0.1f, 0.2f, 0.3f, 0, 0, -0.5f});
  auto* gru = b.node("GRU", {"x", "gw", "gr", "gb"}, {"gy", "gh"});
  OnnxModelBuilder::attr(gru, "linear_before_reset", int64_t{1});
  b.output("ly", {1, 1, 1, 1});
  b.output("lc", {1, 1, 1});
  b.output("gh", {1, 1, 1});
  OnnxModel m = import(b);
  const float x = 0.8f;
  run(m, {x}, "ly");
  const float i = sigmoid(0.5f * x + 0.1f), o = sigmoid(-x + 0.2f), cc = std::tanh(1.5f * x + 0.4f - 0.1f);
  const float c = i * cc;  // f * c0 = 0
  EXPECT_NEAR(m.graph.data(m.graph.find("lc"))[0], c, 1e-5);
  EXPECT_NEAR(m.graph.data(m.graph.find("ly"))[0], o * std::tanh(c), 1e-5);
  const float z = sigmoid(0.5f * x + 0.1f), r = sigmoid(-x + 0.2f), n = std::tanh(2 * x + 0.3f + r * -0.5f);
  EXPECT_NEAR(m.graph.data(m.graph.find("gh"))[0], (1 - z) * n, 1e-5);  // z * h0 = 0
}

TEST(OnnxRnn, AGruWithoutLinearBeforeResetIsRefusedNamingTheAttribute) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 1});
  b.init("gw", {1, 3, 1}, {0.5f, -1, 2});
  b.init("gr", {1, 3, 1}, {1, 1, 1});
  b.node("GRU", {"x", "gw", "gr"}, {"gy"}, "my_gru");
  b.output("gy");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("'my_gru'"), std::string::npos) << e;
  EXPECT_NE(e.find("linear_before_reset"), std::string::npos) << e;
}

}  // namespace
}  // namespace corun
