// save_onnx_model (corun train --save-onnx) on models written in C++: trained initializers replaced by name in
// their own element type and everything else kept, external data moved into the file, and each refusal (a
// tensor the file does not have, another element count, an unwritable target) writing nothing.
#include "onnx_test_helpers.hpp"

#include <corun/error.hpp>
#include <corun/onnx.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

namespace corun {
namespace {

using testing::error_of;
using testing::OnnxModelBuilder;
using testing::run;
namespace fs = std::filesystem;

// x [2, 3] -> Gemm(W [4, 3], transB, b [4]) -> y [2, 4], the weight's ONNX name holding a '/'.
OnnxModelBuilder gemm() {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.init("fc/weight", {4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  b.init("fc.bias", {4}, {0.5f, -10.0f, 0.0f, 1.0f});
  OnnxModelBuilder::attr(b.node("Gemm", {"x", "fc/weight", "fc.bias"}, {"y"}), "transB", int64_t{1});
  b.output("y", {2, 4});
  return b;
}

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + 0.25f * static_cast<float>(i);
  return v;
}

onnx::ModelProto read_model(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromIstream(&f)) << path;
  return m;
}

std::vector<float> raw_floats(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / sizeof(float));
  std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
  return v;
}

class OnnxExport : public testing::OnnxDirTest {
 protected:
  OnnxExport() : OnnxDirTest("corun-onnx-export-") {}
};

TEST_F(OnnxExport, TrainedInitializersAreReplacedByNameAndTheRestIsKept) {
  const OnnxModelBuilder b = gemm();
  b.save(path("in.onnx"));
  const std::vector<float> w = iota(12, -1.0f);
  save_onnx_model(path("in.onnx"), path("out.onnx"), {{"fc_weight", w}});  // the corun name of "fc/weight"
  const onnx::ModelProto out = read_model(path("out.onnx"));
  ASSERT_EQ(out.graph().initializer_size(), 2);
  const onnx::TensorProto& tw = out.graph().initializer(0);
  EXPECT_EQ(tw.name(), "fc/weight");
  EXPECT_EQ(tw.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(std::vector<int64_t>(tw.dims().begin(), tw.dims().end()), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(tw.float_data_size(), 0);  // the trained values are the raw data, not beside the old ones
  EXPECT_EQ(raw_floats(tw), w);
  EXPECT_EQ(out.graph().initializer(1).SerializeAsString(), b.graph->initializer(1).SerializeAsString());
  EXPECT_EQ(out.graph().node(0).SerializeAsString(), b.graph->node(0).SerializeAsString());
  EXPECT_EQ(out.opset_import(0).version(), 13);
  // Imported again, the parameter holds the trained values.
  Graph g = import_onnx(path("out.onnx"));
  const float* p = g.data(g.find("fc_weight"));
  EXPECT_EQ(std::vector<float>(p, p + 12), w);
}

TEST_F(OnnxExport, ADoubleInitializerStaysDoubleAndTheSourceMayBeTheTarget) {
  OnnxModelBuilder b = gemm();
  onnx::TensorProto* bias = b.graph->mutable_initializer(1);
  bias->clear_float_data();
  bias->set_data_type(onnx::TensorProto::DOUBLE);
  for (double x : {0.5, -10.0, 0.0, 1.0}) bias->add_double_data(x);
  b.save(path("m.onnx"));
  save_onnx_model(path("m.onnx"), path("m.onnx"), {{"fc.bias", {1.5f, 2.5f, 3.5f, 4.5f}}});
  const onnx::ModelProto saved = read_model(path("m.onnx"));
  const onnx::TensorProto& t = saved.graph().initializer(1);
  EXPECT_EQ(t.data_type(), onnx::TensorProto::DOUBLE);
  EXPECT_EQ(t.double_data_size(), 0);
  ASSERT_EQ(t.raw_data().size(), 4 * sizeof(double));
  double v[4];
  std::memcpy(v, t.raw_data().data(), sizeof(v));
  EXPECT_EQ(v[0], 1.5);
  EXPECT_EQ(v[3], 4.5);
}

// The weight in weights.bin beside in.onnx: the trained bias is written in, and the untouched weight moves into
// the file too, so that a copy in another folder (with no weights.bin) still holds it.
TEST_F(OnnxExport, ExternalDataMovesIntoTheFile) {
  OnnxModelBuilder b = gemm();
  onnx::TensorProto* w = b.graph->mutable_initializer(0);
  const std::vector<float> values(w->float_data().begin(), w->float_data().end());
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  b.save(path("in.onnx"));
  std::ofstream(path("weights.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  fs::create_directories(dir_ / "other");
  save_onnx_model(path("in.onnx"), path("other/out.onnx"), {{"fc.bias", {1, 2, 3, 4}}});
  const onnx::ModelProto out = read_model(path("other/out.onnx"));
  EXPECT_EQ(out.graph().initializer(0).data_location(), onnx::TensorProto::DEFAULT);
  EXPECT_EQ(out.graph().initializer(0).external_data_size(), 0);
  EXPECT_EQ(raw_floats(out.graph().initializer(0)), values);
  Graph g = import_onnx(path("other/out.onnx"));
  EXPECT_EQ(g.data(g.find("fc.bias"))[3], 4.0f);
}

TEST_F(OnnxExport, ATensorTheFileLacksOrAnotherCountIsRefusedAndNothingIsWritten) {
  gemm().save(path("in.onnx"));
  const std::string lacks = error_of(
      [&] { save_onnx_model(path("in.onnx"), path("out.onnx"), {{"fc.bias", {1, 2, 3, 4}}, {"conv.fused", {1}}}); });
  EXPECT_NE(lacks.find("'conv.fused'"), std::string::npos) << lacks;
  EXPECT_NE(lacks.find("no initializer"), std::string::npos) << lacks;
  EXPECT_NE(lacks.find("--save DIR"), std::string::npos) << lacks;
  const std::string count =
      error_of([&] { save_onnx_model(path("in.onnx"), path("out.onnx"), {{"fc.bias", {1, 2, 3}}}); });
  EXPECT_NE(count.find("'fc.bias'"), std::string::npos) << count;
  EXPECT_NE(count.find("4 elements"), std::string::npos) << count;
  const std::string twice = error_of(
      [&] { save_onnx_model(path("in.onnx"), path("out.onnx"), {{"fc.bias", {1, 2, 3, 4}}, {"fc.bias", {1, 2, 3, 4}}}); });
  EXPECT_NE(twice.find("given twice"), std::string::npos) << twice;
  EXPECT_FALSE(fs::exists(path("out.onnx")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);  // in.onnx only
}

// torch.onnx.export's merged duplicates: one zero initializer behind Identity nodes named after the PyTorch
// biases (fc1.bias, and fc2.bias through a second Identity), each imported as a parameter of its own. Saved,
// each is an initializer under its own name with its trained values, the Identities gone; the source
// initializer, which no node reads any more, keeps its values.
TEST_F(OnnxExport, IdentityUntiedParametersBecomeInitializersOfTheirOwn) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.init("fc.weight", {4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  b.init("onnx::zero", {4}, {0, 0, 0, 0});
  b.node("Identity", {"onnx::zero"}, {"fc1.bias"});
  b.node("Identity", {"fc1.bias"}, {"fc2.bias"});
  OnnxModelBuilder::attr(b.node("Gemm", {"x", "fc.weight", "fc1.bias"}, {"h"}), "transB", int64_t{1});
  b.node("Add", {"h", "fc2.bias"}, {"y"});
  b.output("y", {2, 4});
  b.save(path("in.onnx"));
  std::set<std::string> params;
  const Graph source = import_onnx(path("in.onnx"));
  for (Tensor p : source.params()) params.insert(p.name());
  ASSERT_EQ(params, (std::set<std::string>{"fc.weight", "fc1.bias", "fc2.bias"}));
  const std::vector<float> w = iota(12, 0.0f), b1 = {1, 2, 3, 4}, b2 = {-1, -2, -3, -4};
  save_onnx_model(path("in.onnx"), path("out.onnx"), {{"fc.weight", w}, {"fc1.bias", b1}, {"fc2.bias", b2}});
  const onnx::ModelProto out = read_model(path("out.onnx"));
  ASSERT_EQ(out.graph().node_size(), 2);
  EXPECT_EQ(out.graph().node(0).op_type(), "Gemm");
  std::map<std::string, std::vector<float>> inits;
  for (const onnx::TensorProto& t : out.graph().initializer()) {
    EXPECT_EQ(std::vector<int64_t>(t.dims().begin(), t.dims().end()).size(), t.name() == "fc.weight" ? 2u : 1u);
    inits[t.name()] = t.raw_data().empty() ? std::vector<float>(t.float_data().begin(), t.float_data().end())
                                           : raw_floats(t);
  }
  EXPECT_EQ(inits["fc1.bias"], b1);
  EXPECT_EQ(inits["fc2.bias"], b2);
  EXPECT_EQ(inits["onnx::zero"], (std::vector<float>{0, 0, 0, 0}));
  OnnxModel m = onnx_import::import_model(out, ".", "out.onnx", {});
  // x W^T + b1 + b2 with x all ones: the rows of W summed (0.75, 3, 5.25, 7.5); b1 + b2 = 0.
  EXPECT_EQ(run(m, {1, 1, 1, 1, 1, 1}, "y"), (std::vector<float>{0.75f, 3, 5.25f, 7.5f, 0.75f, 3, 5.25f, 7.5f}));
}

// As root a read-only folder is writable, so the unwritable target is a path under a regular file.
TEST_F(OnnxExport, AnUnwritableTargetIsAnIoErrorNamingIt) {
  gemm().save(path("in.onnx"));
  std::ofstream(path("plain")) << "x";
  try {
    save_onnx_model(path("in.onnx"), path("plain/out.onnx"), {{"fc.bias", {1, 2, 3, 4}}});
    FAIL() << "wrote under a regular file";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::io_error);
    EXPECT_NE(std::string(e.what()).find("plain/out.onnx"), std::string::npos) << e.what();
  }
  const std::string missing = error_of([&] { save_onnx_model(path("absent.onnx"), path("out.onnx"), {}); });
  EXPECT_NE(missing.find("absent.onnx"), std::string::npos) << missing;
  EXPECT_FALSE(fs::exists(path("out.onnx")));
}

}  // namespace
}  // namespace corun
