// MatMul (batched), Transpose, Softmax, LogSoftmax, Dropout and Gather converters on ModelProtos written
// in C++ (no torch): numbers against the ONNX definitions computed here, and the refusals.
#include "onnx_test_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace corun {
namespace {

using testing::error_of;
using testing::import;
using testing::OnnxModelBuilder;

std::vector<float> iota_scaled(int n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>((i * 5) % 11 - 5) * scale;
  return v;
}

// Writes `x` into input 0, runs inline and returns the model's output k (found the way corun infer does).
std::vector<float> run_output(OnnxModel& m, const std::vector<float>& x, size_t k = 0) {
  std::copy(x.begin(), x.end(), m.graph.data(m.inputs[0]));
  InlineRunner runner(m.graph);
  runner.run();
  const float* p = m.graph.data(m.outputs[k]);
  return std::vector<float>(p, p + m.outputs[k].shape().numel());
}

TEST(OnnxMatMul, BroadcastsBatchDimsAndKeepsTwoDimensionalProductsOnMatmul) {
  OnnxModelBuilder b;
  b.input("a", {2, 1, 2, 3});
  const std::vector<float> bv = iota_scaled(18, 0.5f);
  b.init("b", {3, 3, 2}, bv);
  b.node("MatMul", {"a", "b"}, {"y"});
  b.output("y");
  OnnxModel m = import(b);
  ASSERT_EQ(m.outputs[0].shape(), (Shape{2, 3, 2, 2}));
  const std::vector<float> a = iota_scaled(12, 1.0f);
  const std::vector<float> y = run_output(m, a);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          float s = 0;
          for (int k = 0; k < 3; ++k)
            s += a[static_cast<size_t>(i * 6 + r * 3 + k)] * bv[static_cast<size_t>(j * 6 + k * 2 + c)];
          EXPECT_NEAR(y[static_cast<size_t>(((i * 3 + j) * 2 + r) * 2 + c)], s, 1e-4);
        }
}

TEST(OnnxMatMul, AOneDimensionalOperandIsAColumnWhoseDimIsDropped) {
  OnnxModelBuilder b;
  b.input("a", {2, 2, 3});
  b.init("v", {3}, {1.0f, -2.0f, 0.5f});
  b.node("MatMul", {"a", "v"}, {"y"});
  b.output("y");
  OnnxModel m = import(b);
  ASSERT_EQ(m.outputs[0].shape(), (Shape{2, 2}));
  const std::vector<float> a = iota_scaled(12, 1.0f), y = run_output(m, a);
  for (int r = 0; r < 4; ++r)
    EXPECT_NEAR(y[static_cast<size_t>(r)],
                a[static_cast<size_t>(r * 3)] - 2 * a[static_cast<size_t>(r * 3 + 1)] +
                    0.5f * a[static_cast<size_t>(r * 3 + 2)],
                1e-5);
}

TEST(OnnxTranspose, PermutesAndReversesWithoutPerm) {
  OnnxModelBuilder b;
  b.input("x", {2, 3, 4});
  auto* n = b.node("Transpose", {"x"}, {"y"});
  OnnxModelBuilder::attr(n, "perm", std::vector<int64_t>{1, 2, 0});
  b.node("Transpose", {"x"}, {"z"});
  b.output("y");
  b.output("z");
  OnnxModel m = import(b);
  ASSERT_EQ(m.outputs[0].shape(), (Shape{3, 4, 2}));
  ASSERT_EQ(m.outputs[1].shape(), (Shape{4, 3, 2}));
  const std::vector<float> x = iota_scaled(24, 1.0f), y = run_output(m, x);
  const float* z = m.graph.data(m.outputs[1]);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(y[static_cast<size_t>((j * 4 + k) * 2 + i)], x[static_cast<size_t>((i * 3 + j) * 4 + k)]);
        EXPECT_EQ(z[(k * 3 + j) * 2 + i], x[static_cast<size_t>((i * 3 + j) * 4 + k)]);
      }
}

TEST(OnnxTranspose, APermThatIsNoPermutationIsRefused) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  auto* n = b.node("Transpose", {"x"}, {"y"});
  OnnxModelBuilder::attr(n, "perm", std::vector<int64_t>{0, 0});
  b.output("y");
  EXPECT_NE(error_of([&] { import(b); }).find("perm="), std::string::npos);
}

// Softmax along axis 1 of [2, 3, 4] at opset 13, LogSoftmax along the last axis, and opset 11's Softmax
// with axis 1, which normalises each batch row's 12 values together.
TEST(OnnxSoftmax, Opset13AxesAndTheFlattenedRowsOfEarlierOpsets) {
  const std::vector<float> x = iota_scaled(24, 0.3f);
  for (int opset : {13, 11}) {
    OnnxModelBuilder b(opset);
    b.input("x", {2, 3, 4});
    auto* s = b.node("Softmax", {"x"}, {"s"});
    OnnxModelBuilder::attr(s, "axis", int64_t{1});
    b.node("LogSoftmax", {"x"}, {"l"});  // default axis: -1 at 13, 1 (= the last two dims flattened) at 11
    b.output("s");
    b.output("l");
    OnnxModel m = import(b);
    const std::vector<float> s_got = run_output(m, x);
    const float* l_got = m.graph.data(m.outputs[1]);
    // Softmax over each group of indices sharing what is outside the normalised axes.
    auto check = [&](const float* got, bool log, int group, int stride, int count, int outer_step, int outers,
                     int inner) {
      for (int o = 0; o < outers; ++o)
        for (int in = 0; in < inner; ++in) {
          double sum = 0;
          for (int k = 0; k < count; ++k) sum += std::exp(x[static_cast<size_t>(o * outer_step + in + k * stride)]);
          for (int k = 0; k < count; ++k) {
            const size_t at = static_cast<size_t>(o * outer_step + in + k * stride);
            const double p = std::exp(x[at]) / sum;
            EXPECT_NEAR(got[at], log ? std::log(p) : p, 1e-5) << "opset " << opset << " group " << group;
          }
        }
    };
    if (opset == 13) {
      check(s_got.data(), false, 0, 4, 3, 12, 2, 4);  // axis 1: 3 values 4 apart, for each of 2 x 4
      check(l_got, true, 1, 1, 4, 4, 6, 1);           // axis -1: 4 contiguous values, 6 rows
    } else {
      check(s_got.data(), false, 0, 1, 12, 12, 2, 1);  // axis 1 flattens [3, 4]: 12 contiguous values
      check(l_got, true, 1, 1, 12, 12, 2, 1);
    }
  }
}

OnnxModelBuilder dropout_model(bool with_training_mode) {
  OnnxModelBuilder b;
  b.input("x", {4, 250});
  b.init("ratio", {}, {0.25f});
  auto* t = b.node("Constant", {}, {"on"});
  auto* a = t->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  a->mutable_t()->add_int32_data(1);
  if (with_training_mode) {
    b.node("Dropout", {"x", "ratio", "on"}, {"y"}, "first");
    b.node("Dropout", {"x", "ratio", "on"}, {"z"}, "second");
  } else {
    b.node("Dropout", {"x", "ratio"}, {"y"}, "first");
    b.node("Dropout", {"x", "ratio"}, {"z"}, "second");
  }
  b.output("y");
  b.output("z");
  return b;
}

TEST(OnnxDropout, IdentityAtInferenceAndAScaledMaskPerNodeWhenTraining) {
  const std::vector<float> ones(1000, 1.0f);
  {
    OnnxModel m = import(dropout_model(false));
    EXPECT_TRUE(m.outputs[0] == m.inputs[0]) << "an inference import's Dropout is the input itself";
  }
  for (bool by_training_mode : {true, false}) {
    OnnxImportOptions o;
    o.training = !by_training_mode;  // training_mode = 1 trains even in an inference import
    OnnxModel m = import(dropout_model(by_training_mode), o);
    const std::vector<float> y = run_output(m, ones);
    const float* z = m.graph.data(m.outputs[1]);
    int dropped = 0, differ = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      EXPECT_TRUE(y[i] == 0.0f || std::fabs(y[i] - 1.0f / 0.75f) < 1e-5) << y[i];
      dropped += y[i] == 0.0f;
      differ += (y[i] == 0.0f) != (z[i] == 0.0f);
    }
    EXPECT_GT(dropped, 180);
    EXPECT_LT(dropped, 320);
    EXPECT_GT(differ, 100) << "two Dropout nodes must draw different masks";
  }
}

TEST(OnnxDropout, TheMaskOutputIsRefused) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.node("Dropout", {"x"}, {"y", "mask"});
  b.output("y");
  EXPECT_NE(error_of([&] { import(b); }).find("mask"), std::string::npos);
}

TEST(OnnxGather, GraphValuesWithConstantIndicesAndScalarIndexDropTheAxis) {
  OnnxModelBuilder b;
  b.input("x", {2, 3, 4});
  b.init_ints("pick", {2, 0});
  auto* g = b.node("Gather", {"x", "pick"}, {"y"});
  OnnxModelBuilder::attr(g, "axis", int64_t{1});
  auto* k = b.node("Constant", {}, {"last"});
  auto* a = k->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_int64_data(-1);  // 0-D: the axis is dropped
  auto* s = b.node("Gather", {"x", "last"}, {"z"});
  OnnxModelBuilder::attr(s, "axis", int64_t{-1});
  b.output("y");
  b.output("z");
  OnnxModel m = import(b);
  ASSERT_EQ(m.outputs[0].shape(), (Shape{2, 2, 4}));
  ASSERT_EQ(m.outputs[1].shape(), (Shape{2, 3}));
  EXPECT_TRUE(m.graph.params().empty()) << "integer indices are data, not parameters";
  const std::vector<float> x = iota_scaled(24, 1.0f), y = run_output(m, x);
  const float* z = m.graph.data(m.outputs[1]);
  for (int i = 0; i < 2; ++i)
    for (int e = 0; e < 4; ++e) {
      EXPECT_EQ(y[static_cast<size_t>((i * 2 + 0) * 4 + e)], x[static_cast<size_t>((i * 3 + 2) * 4 + e)]);
      EXPECT_EQ(y[static_cast<size_t>((i * 2 + 1) * 4 + e)], x[static_cast<size_t>((i * 3 + 0) * 4 + e)]);
    }
  for (int r = 0; r < 6; ++r) EXPECT_EQ(z[r], x[static_cast<size_t>(r * 4 + 3)]);
}

TEST(OnnxGather, ComputedIndicesIntoAParameterTableAreAnEmbeddingLookup) {
  OnnxModelBuilder b;
  b.input("ids", {4});
  const std::vector<float> table = iota_scaled(15, 0.5f);
  b.init("table", {5, 3}, table);
  b.node("Gather", {"table", "ids"}, {"y"});
  b.output("y");
  OnnxModel m = import(b);
  ASSERT_EQ(m.outputs[0].shape(), (Shape{4, 3}));
  EXPECT_EQ(m.graph.params().size(), 1u) << "the table stays a trainable parameter";
  const std::vector<float> ids = {4, 0, 2, 4}, y = run_output(m, ids);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(y[static_cast<size_t>(r * 3 + c)],
                table[static_cast<size_t>(static_cast<int>(ids[static_cast<size_t>(r)]) * 3 + c)]);
}

TEST(OnnxGather, AConstantIndexOutOfRangeIsRefused) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.init_ints("pick", {3});
  b.node("Gather", {"x", "pick"}, {"y"});
  b.output("y");
  EXPECT_NE(error_of([&] { import(b); }).find("out of range"), std::string::npos);
}

TEST(OnnxPad, ConstantBandsOnEachSideAndACropForANegativePad) {
  OnnxModelBuilder b;
  b.input("x", {1, 2, 3, 3});
  // begins (N, C, H, W) then ends: H gets 1 row above, W 2 columns left and 1 right, C loses its last channel.
  b.init_ints("pads", {0, 0, 1, 2, 0, -1, 0, 1});
  b.init("value", {}, {0.5f});
  b.node("Pad", {"x", "pads", "value"}, {"y"});
  b.output("y");
  OnnxModel m = import(b);
  ASSERT_EQ(m.outputs[0].shape(), (Shape{1, 1, 4, 6}));
  const std::vector<float> x = iota_scaled(18, 1.0f), y = run_output(m, x);
  for (int h = 0; h < 4; ++h)
    for (int w = 0; w < 6; ++w) {
      const bool inside = h >= 1 && w >= 2 && w < 5;
      const float want = inside ? x[static_cast<size_t>((h - 1) * 3 + (w - 2))] : 0.5f;
      EXPECT_EQ(y[static_cast<size_t>(h * 6 + w)], want) << "h " << h << " w " << w;
    }
}

// numpy.pad's reflect / edge of a 3x4 image with pads (top 2, left 1, bottom 1, right 3), computed here.
int mirrored(int i, int n, bool reflect) {
  if (reflect) {
    if (i < 0) return -i;
    return i >= n ? 2 * (n - 1) - i : i;
  }
  return std::min(std::max(i, 0), n - 1);
}

TEST(OnnxPad, ReflectAndEdgeModesMirrorOrRepeatTheBorderAsNumpyPad) {
  for (const char* mode : {"reflect", "edge"}) {
    const bool reflect = std::string(mode) == "reflect";
    OnnxModelBuilder b;
    b.input("x", {1, 1, 3, 4});
    b.init_ints("pads", {0, 0, 2, 1, 0, 0, 1, 3});
    auto* n = b.node("Pad", {"x", "pads"}, {"y"});
    OnnxModelBuilder::attr(n, "mode", std::string(mode));
    b.output("y");
    OnnxModel m = import(b);
    ASSERT_EQ(m.outputs[0].shape(), (Shape{1, 1, 6, 8})) << mode;
    const std::vector<float> x = iota_scaled(12, 1.0f), y = run_output(m, x);
    for (int h = 0; h < 6; ++h)
      for (int w = 0; w < 8; ++w) {
        const int sh = mirrored(h - 2, 3, reflect), sw = mirrored(w - 1, 4, reflect);
        EXPECT_EQ(y[static_cast<size_t>(h * 8 + w)], x[static_cast<size_t>(sh * 4 + sw)])
            << mode << " h " << h << " w " << w;
      }
  }
}

// PyTorch's nn.ReflectionPad2d((1, 3, 2, 1)) export: its pads are computed from constants (the module's
// [left, right, top, bottom] + ConstantOfShape zeros, reshaped to [4, 2], rows reversed by a step -1 Slice,
// transposed, flattened, cast), which fold at import into the ONNX pads (0, 0, 2, 1, 0, 0, 1, 3).
TEST(OnnxPad, PyTorchsComputedPadsFoldAtImport) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 3, 4});
  b.init_ints("torch_pads", {1, 3, 2, 1});
  b.init_ints("zeros_shape", {4});
  b.node("ConstantOfShape", {"zeros_shape"}, {"zeros"});
  OnnxModelBuilder::attr(b.node("Cast", {"zeros"}, {"zeros_int"}), "to", int64_t{onnx::TensorProto::INT64});
  auto* cat = b.node("Concat", {"torch_pads", "zeros_int"}, {"all"});
  OnnxModelBuilder::attr(cat, "axis", int64_t{0});
  b.init_ints("pairs", {-1, 2});
  b.node("Reshape", {"all", "pairs"}, {"rows"});
  b.init_ints("starts", {-1});
  b.init_ints("ends", {-9223372036854775807LL});
  b.init_ints("axes", {0});
  b.init_ints("steps", {-1});
  b.node("Slice", {"rows", "starts", "ends", "axes", "steps"}, {"reversed"});
  auto* tr = b.node("Transpose", {"reversed"}, {"cols"});
  OnnxModelBuilder::attr(tr, "perm", std::vector<int64_t>{1, 0});
  b.init_ints("flat", {-1});
  b.node("Reshape", {"cols", "flat"}, {"pads"});
  auto* pad = b.node("Pad", {"x", "pads"}, {"y"});
  OnnxModelBuilder::attr(pad, "mode", std::string("reflect"));
  b.output("y");
  OnnxModel m = import(b);
  ASSERT_EQ(m.outputs[0].shape(), (Shape{1, 1, 6, 8}));
  const std::vector<float> x = iota_scaled(12, 1.0f), y = run_output(m, x);
  for (int h = 0; h < 6; ++h)
    for (int w = 0; w < 8; ++w)
      EXPECT_EQ(y[static_cast<size_t>(h * 8 + w)],
                x[static_cast<size_t>(mirrored(h - 2, 3, true) * 4 + mirrored(w - 1, 4, true))])
          << "h " << h << " w " << w;
}

TEST(OnnxPad, OtherModesAndMismatchedPadsAreRefused) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 3, 3});
  b.init_ints("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  auto* n = b.node("Pad", {"x", "pads"}, {"y"});
  OnnxModelBuilder::attr(n, "mode", std::string("wrap"));
  b.output("y");
  EXPECT_NE(error_of([&] { import(b); }).find("'wrap' (constant, reflect or edge)"), std::string::npos);
  OnnxModelBuilder deep;  // reflect cannot mirror 3 rows of a 3-row axis
  deep.input("x", {1, 1, 3, 3});
  deep.init_ints("pads", {0, 0, 3, 0, 0, 0, 0, 0});
  auto* dn = deep.node("Pad", {"x", "pads"}, {"y"});
  OnnxModelBuilder::attr(dn, "mode", std::string("reflect"));
  deep.output("y");
  EXPECT_NE(error_of([&] { import(deep); }).find("each reflect pad must be below the extent"), std::string::npos);
  OnnxModelBuilder crop;  // edge with a negative pad
  crop.input("x", {1, 1, 3, 3});
  crop.init_ints("pads", {0, 0, -1, 0, 0, 0, 0, 0});
  auto* cn = crop.node("Pad", {"x", "pads"}, {"y"});
  OnnxModelBuilder::attr(cn, "mode", std::string("edge"));
  crop.output("y");
  EXPECT_NE(error_of([&] { import(crop); }).find("negative pads"), std::string::npos);
  OnnxModelBuilder b2;
  b2.input("x", {1, 1, 3, 3});
  b2.init_ints("pads", {1, 1});
  b2.node("Pad", {"x", "pads"}, {"y"});
  b2.output("y");
  EXPECT_NE(error_of([&] { import(b2); }).find("2 pads for 4 axes"), std::string::npos);
}

}  // namespace
}  // namespace corun
