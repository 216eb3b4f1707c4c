// The DCGAN's graphs (corun/models/dcgan.hpp), built without an engine: each step graph trains exactly one
// network (its parameters, gradients and Adam state) and sees the other's weights as inputs; the sizes equal
// PyTorch's DCGAN of scripts/export-onnx.py; init_params starts the copies equal to their owners.
#include <corun/models/dcgan.hpp>

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Tensor;
using corun::ValueKind;
using corun::models::Dcgan;
using corun::models::DcganConfig;

int64_t numel(const std::vector<Tensor>& ts) {
  int64_t n = 0;
  for (const Tensor& t : ts) n += t.shape().numel();
  return n;
}

DcganConfig tiny() {
  DcganConfig c;
  c.batch = 4;
  c.filters = 4;
  return c;
}

TEST(DcganModel, EachStepGraphTrainsOneNetwork) {
  Dcgan gan(tiny());
  for (Tensor p : gan.d_step.params()) EXPECT_EQ(p.name().rfind("d.", 0), 0u) << p.name();
  for (Tensor p : gan.g_step.params()) EXPECT_EQ(p.name().rfind("g.", 0), 0u) << p.name();
  EXPECT_EQ(gan.d_step.params().size(), gan.discriminator.all().size());
  EXPECT_EQ(gan.g_step.params().size(), gan.generator.all().size());
  // The other network's weights are inputs: no gradient, so no update.
  for (Tensor t : gan.generator_copy.all()) {
    EXPECT_EQ(gan.d_step.kind(t), ValueKind::input) << t.name();
    EXPECT_FALSE(gan.d_step.grad(t).valid()) << t.name();
  }
  for (Tensor t : gan.discriminator_copy.all()) {
    EXPECT_EQ(gan.g_step.kind(t), ValueKind::input) << t.name();
    EXPECT_FALSE(gan.g_step.grad(t).valid()) << t.name();
  }
  // The G step's gradient reaches G through D (the non-saturating loss); the D step's stops at the fakes.
  for (Tensor p : gan.g_step.params()) EXPECT_TRUE(gan.g_step.grad(p).valid()) << p.name();
  for (Tensor p : gan.d_step.params()) EXPECT_TRUE(gan.d_step.grad(p).valid()) << p.name();
  EXPECT_FALSE(gan.d_step.grad(gan.d_z).valid());
  EXPECT_EQ(gan.d_fake.shape(), Shape({4, 1, 32, 32}));
  EXPECT_EQ(gan.g_fake.shape(), Shape({4, 1, 32, 32}));
  EXPECT_EQ(gan.d_real_logits.shape(), Shape({4, 1}));
  EXPECT_EQ(gan.g_logits.shape(), Shape({4, 1}));
  EXPECT_EQ(gan.loss_d.shape(), Shape({1}));
  // What --save writes: owned state includes batch-norm statistics and Adam moments, not the "aux." copies.
  int owned_state = 0;
  for (Tensor t : gan.g_step.optimizer_state()) {
    if (Dcgan::owned(t.name(), true))
      ++owned_state;
    else
      EXPECT_TRUE(t.name().rfind("aux.", 0) == 0 || t.name() == "optimizer.hyper") << t.name();
  }
  EXPECT_EQ(owned_state, 3 * 2 + 2 * static_cast<int>(gan.generator.all().size()));  // running stats, m, v
}

// The classic widths (filters 64): the same parameter counts as PyTorch's DCGAN in scripts/export-onnx.py.
TEST(DcganModel, SizesMatchPyTorch) {
  Dcgan gan(DcganConfig{});
  EXPECT_EQ(numel(gan.generator.all()), 1066880);
  EXPECT_EQ(numel(gan.discriminator.all()), 661248);
  EXPECT_EQ(gan.generator.conv[0].shape(), Shape({100, 256, 4, 4}));  // ConvTranspose2d: [C_in, C_out, R, S]
  EXPECT_EQ(gan.generator.conv[3].shape(), Shape({64, 1, 4, 4}));
  EXPECT_EQ(gan.discriminator.conv[0].shape(), Shape({64, 1, 4, 4}));
  EXPECT_EQ(gan.discriminator.conv[3].shape(), Shape({1, 256, 4, 4}));
  EXPECT_FALSE(gan.discriminator.bn_scale[0].valid()) << "no batch norm on D's first layer";
}

TEST(DcganModel, InitialisationAsThePaperAndCopiesEqualOwners) {
  DcganConfig c = tiny();
  c.filters = 16;
  Dcgan gan(c);
  gan.init_params();
  const std::vector<Tensor> g = gan.generator.all(), gc = gan.generator_copy.all();
  for (size_t i = 0; i < g.size(); ++i)
    for (int64_t e = 0; e < g[i].shape().numel(); ++e)
      ASSERT_EQ(gan.g_step.data(g[i])[e], gan.d_step.data(gc[i])[e]) << g[i].name();
  const Tensor w = gan.discriminator.conv[1];
  double sum = 0, sq = 0;
  const float* d = gan.d_step.data(w);
  for (int64_t e = 0; e < w.shape().numel(); ++e) sum += d[e], sq += static_cast<double>(d[e]) * d[e];
  const double n = static_cast<double>(w.shape().numel());
  EXPECT_NEAR(sum / n, 0.0, 0.003);
  EXPECT_NEAR(std::sqrt(sq / n), 0.02, 0.002);
  const float* scale = gan.d_step.data(gan.discriminator.bn_scale[1]);
  EXPECT_NEAR(scale[0], 1.0f, 0.1f);
}

TEST(DcganModel, RefusesAnImageSizeItCannotMake) {
  DcganConfig c = tiny();
  c.image = 28;
  try {
    Dcgan gan(c);
    FAIL() << "image 28 accepted";
  } catch (const corun::Error& e) {
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
  }
}

}  // namespace
