// Identity nodes over initializers (issue 51): torch.onnx.export writes equal initializers (zero biases, the
// default BatchNorm statistics) once, behind one Identity node per duplicate named after its PyTorch
// parameter. Each Identity output imports as a parameter or statistic of its own, with the same values:
// trained apart, as PyTorch trains them, and a statistic never meets the parameter it was merged with.
#include "onnx_test_helpers.hpp"

#include <corun/inline.hpp>
#include <corun/onnx.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace corun {
namespace {

using testing::import;
using testing::OnnxModelBuilder;
using testing::run;

// x [2, 3] -> Gemm(fc1.weight, fc1.bias) -> Relu -> Gemm(fc2.weight, fc2.bias) -> y [2, 4]. With `shared`,
// both biases are Identity nodes over one zero initializer, as the exporter writes them; otherwise each is
// an initializer of its own (the reference: two separate parameters by construction).
OnnxModelBuilder two_layers(bool shared) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.init("fc1.weight", {4, 3}, {0.5f, -0.2f, 0.1f, 0.3f, 0.8f, -0.4f, -0.6f, 0.2f, 0.7f, 0.1f, 0.1f, 0.1f});
  b.init("fc2.weight", {4, 4},
         {0.2f, -0.5f, 0.3f, 0.1f, -0.3f, 0.4f, 0.6f, -0.2f, 0.5f, 0.1f, -0.7f, 0.3f, 0.1f, 0.2f, 0.3f, 0.4f});
  if (shared) {
    b.init("onnx::Gemm_zero", {4}, {0, 0, 0, 0});
    b.node("Identity", {"onnx::Gemm_zero"}, {"fc1.bias"});
    b.node("Identity", {"onnx::Gemm_zero"}, {"fc2.bias"});
  } else {
    b.init("fc1.bias", {4}, {0, 0, 0, 0});
    b.init("fc2.bias", {4}, {0, 0, 0, 0});
  }
  OnnxModelBuilder::attr(b.node("Gemm", {"x", "fc1.weight", "fc1.bias"}, {"h"}), "transB", int64_t{1});
  b.node("Relu", {"h"}, {"r"});
  OnnxModelBuilder::attr(b.node("Gemm", {"r", "fc2.weight", "fc2.bias"}, {"y"}), "transB", int64_t{1});
  b.output("y", {2, 4});
  return b;
}

// Every parameter's values after one SGD step of softmax cross-entropy on a fixed batch, by name.
std::map<std::string, std::vector<float>> after_one_step(const OnnxModelBuilder& b) {
  OnnxImportOptions o;
  o.training = true;
  o.add_training_loss = true;
  OnnxModel m = import(b, o);
  m.graph.backward(m.loss, {.learning_rate = 0.5f});
  const std::vector<float> x = {1.0f, 2.0f, -1.0f, 0.5f, -0.3f, 2.0f};
  const std::vector<float> targets = {1, 0, 0, 0, 0, 0, 1, 0};
  std::copy(targets.begin(), targets.end(), m.graph.data(m.targets));
  run(m, x, "y");
  std::map<std::string, std::vector<float>> out;
  for (Tensor p : m.graph.params()) {
    const float* v = m.graph.data(p);
    out[p.name()] = std::vector<float>(v, v + p.shape().numel());
  }
  return out;
}

TEST(OnnxIdentity, OneInitializerBehindTwoIdentitiesTrainsAsTwoParameters) {
  const auto shared = after_one_step(two_layers(true));
  const auto separate = after_one_step(two_layers(false));
  std::set<std::string> names;
  for (const auto& [name, v] : shared) names.insert(name);
  // The Identity outputs are the parameters, under PyTorch's names; the merged initializer is none.
  EXPECT_EQ(names, (std::set<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  // The same step as two initializers of their own, to the bit.
  EXPECT_EQ(shared, separate);
  // Both started at zero; one step moved them apart (a tied parameter would hold one value for both).
  EXPECT_NE(shared.at("fc1.bias"), shared.at("fc2.bias"));
  EXPECT_NE(shared.at("fc1.bias"), std::vector<float>(4, 0.0f));
  EXPECT_NE(shared.at("fc2.bias"), std::vector<float>(4, 0.0f));
}

// DenseNet-121 with its default initialisation: the running variance (ones) is the scale merged, the running
// mean (zeros) the bias, and the BatchNormalization node reads the statistics through Identity nodes.
OnnxModelBuilder batch_norm_behind_identity() {
  OnnxModelBuilder b;
  b.input("x", {2, 2, 1, 2});
  b.init("bn.weight", {2}, {1.0f, 1.0f});
  b.init("bn.bias", {2}, {0.0f, 0.0f});
  b.node("Identity", {"bn.bias"}, {"bn.running_mean"});
  b.node("Identity", {"bn.weight"}, {"bn.running_var"});
  auto* n =
      b.node("BatchNormalization", {"x", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"y"}, "bn");
  OnnxModelBuilder::attr(n, "epsilon", 0.0f);
  OnnxModelBuilder::attr(n, "momentum", 0.5f);
  b.output("y", {2, 2, 1, 2});
  return b;
}

TEST(OnnxIdentity, BatchNormStatisticsBehindIdentityImportAsStateApartFromTheParameters) {
  OnnxModel m = import(batch_norm_behind_identity());
  EXPECT_EQ(m.graph.kind(m.graph.find("bn.running_mean")), ValueKind::state);
  EXPECT_EQ(m.graph.kind(m.graph.find("bn.running_var")), ValueKind::state);
  EXPECT_EQ(m.graph.kind(m.graph.find("bn.weight")), ValueKind::param);
  EXPECT_EQ(m.graph.kind(m.graph.find("bn.bias")), ValueKind::param);
  const std::vector<float> x = {1, 3, 2, 4, 5, 7, 6, 8};
  EXPECT_EQ(run(m, x, "y"), x);  // (x - 0) / sqrt(1) * 1 + 0
}

TEST(OnnxIdentity, ATrainingImportUpdatesTheStatisticsAndLeavesTheParametersTheyWereMergedWith) {
  OnnxImportOptions o;
  o.training = true;
  OnnxModel m = import(batch_norm_behind_identity(), o);
  run(m, {1, 3, 2, 4, 5, 7, 6, 8}, "y");  // channel 0: 1 3 5 7 (mean 4, unbiased var 20/3); channel 1: 2 4 6 8
  const float* mean = m.graph.data(m.graph.find("bn.running_mean"));
  const float* var = m.graph.data(m.graph.find("bn.running_var"));
  EXPECT_NEAR(mean[0], 0.5f * 4, 1e-5);
  EXPECT_NEAR(mean[1], 0.5f * 5, 1e-5);
  EXPECT_NEAR(var[0], 0.5f + 0.5f * 20 / 3.0f, 1e-5);
  EXPECT_NEAR(var[1], 0.5f + 0.5f * 20 / 3.0f, 1e-5);
  const float* scale = m.graph.data(m.graph.find("bn.weight"));
  const float* bias = m.graph.data(m.graph.find("bn.bias"));
  EXPECT_EQ(std::vector<float>(scale, scale + 2), (std::vector<float>{1.0f, 1.0f}));
  EXPECT_EQ(std::vector<float>(bias, bias + 2), (std::vector<float>{0.0f, 0.0f}));
}

}  // namespace
}  // namespace corun
