// The ONNX importer on models written in C++ (no torch needed): the converter table, the mapping of
// initializers, inputs and outputs, the folding of shape arithmetic, the numbers of a small graph run
// inline, and every kind of bad file or unsupported node (each a corun::Error naming what is wrong).
#include "onnx/convert.hpp"
#include "onnx/importer.hpp"
#include "graphs/graph_impl.hpp"
#include "onnx_test_helpers.hpp"

#include <corun/error.hpp>
#include <corun/inline.hpp>
#include <corun/onnx.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <unistd.h>

namespace corun {
namespace {

using testing::error_of;
using testing::import;
using testing::OnnxModelBuilder;
using testing::run;
namespace fs = std::filesystem;

// x [2, 3] -> Gemm(W [4, 3], transB, b [4]) -> Relu -> y [2, 4].
OnnxModelBuilder gemm_relu() {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.init("fc/weight", {4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  b.init("fc.bias", {4}, {0.5f, -10.0f, 0.0f, 1.0f});
  auto* gemm = b.node("Gemm", {"x", "fc/weight", "fc.bias"}, {"h"});
  OnnxModelBuilder::attr(gemm, "transB", int64_t{1});
  b.node("Relu", {"h"}, {"y"});
  b.output("y", {2, 4});
  return b;
}

TEST(OnnxTable, EveryRowIsFoundByItsOpTypeOnce) {
  std::set<std::string> seen;
  for (const onnx_import::OpRow& r : onnx_import::op_table()) {
    EXPECT_TRUE(seen.insert(r.op_type).second) << r.op_type << " has two rows";
    EXPECT_EQ(onnx_import::find_op(r.op_type), &r);
    EXPECT_NE(std::string(r.supported), "");
  }
  for (const char* op : {"Conv", "Gemm", "MatMul", "Reshape", "Shape", "Gather", "Constant", "MaxPool", "Concat"})
    EXPECT_TRUE(seen.count(op)) << op;
  EXPECT_EQ(onnx_import::find_op("Softplus"), nullptr);
}

TEST(OnnxImport, GemmReluComputesTheFileWeightsNumbersAndKeepsTheNames) {
  OnnxModel m = import(gemm_relu());
  ASSERT_EQ(m.inputs.size(), 1u);
  ASSERT_EQ(m.output_names, std::vector<std::string>{"y"});
  EXPECT_EQ(m.outputs[0].shape(), (Shape{2, 4}));
  std::set<std::string> params;
  for (Tensor p : m.graph.params()) params.insert(p.name());
  EXPECT_EQ(params, (std::set<std::string>{"fc_weight", "fc.bias"}));  // '/' cannot be in a file name
  const std::vector<float> y = run(m, {1, 2, 3, -4, -5, -6}, "y");
  ASSERT_EQ(y.size(), 8u);
  const float want[8] = {1.5f, 0.0f, 3.0f, 7.0f, 0.0f, 0.0f, 0.0f, 0.0f};  // relu(x W^T + b)
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << i;
}

// PyTorch's x.view(x.size(0), -1) with a dynamic batch: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
TEST(OnnxImport, FoldsTheShapeArithmeticOfAViewWithADynamicBatch) {
  OnnxModelBuilder b;
  b.input("x", {-1, 2, 3});
  b.node("Shape", {"x"}, {"s"});
  b.init_ints("zero", {0});
  auto* k = b.node("Constant", {}, {"idx"});
  auto* a = k->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_int64_data(0);  // a scalar index: Gather drops the axis
  b.node("Gather", {"s", "idx"}, {"n"});
  b.node("Unsqueeze", {"n", "zero"}, {"n1"});
  b.init_ints("minus_one", {-1});
  auto* cat = b.node("Concat", {"n1", "minus_one"}, {"target"});
  OnnxModelBuilder::attr(cat, "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"flat"});
  b.node("Relu", {"flat"}, {"y"});
  b.output("y", {-1, 6});
  OnnxImportOptions o;
  o.batch = 5;
  OnnxModel m = import(b, o);
  EXPECT_EQ(m.outputs[0].shape(), (Shape{5, 6}));
  EXPECT_TRUE(m.graph.params().empty()) << "integer initializers are shape data, not parameters";
}

// nn.GELU as PyTorch exports it before opset 20: (x * (1 + Erf(x / sqrt 2))) * 0.5 -> one gelu node.
TEST(OnnxImport, RecognisesTheErfGeluOfPyTorchExports) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.init("sqrt2", {}, {1.41421353816986084f});
  b.init("one", {}, {1.0f});
  b.init("half", {}, {0.5f});
  b.node("Div", {"x", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "one"}, {"a"});
  b.node("Mul", {"x", "a"}, {"m"});
  b.node("Mul", {"m", "half"}, {"y"});
  b.output("y", {2, 3});
  OnnxModel m = import(b);
  EXPECT_EQ(m.graph.num_nodes(), 1);
  EXPECT_TRUE(m.graph.params().empty());
  const std::vector<float> x = {-2, -0.5f, 0, 0.5f, 1, 3};
  const std::vector<float> y = run(m, x, m.output_names[0]);
  ASSERT_EQ(y.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0))), 1e-6) << i;
  // The same chain with the Erf read twice is not a GELU: its five nodes stay, computing the same numbers.
  b.node("Relu", {"e"}, {"e2"});
  b.output("e2");
  OnnxModel chain = import(b);
  EXPECT_GE(chain.graph.num_nodes(), 6);
  const std::vector<float> y2 = run(chain, x, "y");
  ASSERT_EQ(y2.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y2[i], y[i], 1e-6) << i;
}

// nn.Hardswish as PyTorch exports it before opset 14: x * HardSigmoid(x; 1/6, 1/2) -> one hard_swish node,
// which computes PyTorch's x * relu6(x + 3) / 6 bit for bit.
TEST(OnnxImport, RecognisesTheHardSwishOfPyTorchExports) {
  OnnxModelBuilder b;
  b.input("x", {2, 4});
  auto* hs = b.node("HardSigmoid", {"x"}, {"h"});
  OnnxModelBuilder::attr(hs, "alpha", 1.0f / 6.0f);
  OnnxModelBuilder::attr(hs, "beta", 0.5f);
  b.node("Mul", {"h", "x"}, {"y"});  // either operand order
  b.output("y", {2, 4});
  OnnxModel m = import(b);
  ASSERT_EQ(m.graph.num_nodes(), 1);
  EXPECT_EQ(m.graph.impl().nodes[0].call.kind, codelets::OpKind::hard_swish);
  const std::vector<float> x = {-4, -3, -1, 0, 0.5f, 2, 3, 7};
  const std::vector<float> y = run(m, x, "y");
  ASSERT_EQ(y.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], x[i] * std::min(std::max(x[i] + 3.0f, 0.0f), 6.0f) / 6.0f) << i;
  // ONNX's default alpha (0.2) is not PyTorch's hardswish, and a HardSigmoid read twice must stay: both keep
  // their two nodes.
  OnnxModelBuilder d;
  d.input("x", {2, 4});
  d.node("HardSigmoid", {"x"}, {"h"});
  d.node("Mul", {"x", "h"}, {"y"});
  d.output("y", {2, 4});
  EXPECT_EQ(import(d).graph.num_nodes(), 2);
  b.output("h");
  EXPECT_EQ(import(b).graph.num_nodes(), 2);
}

TEST(OnnxImport, TrainingLossMakesATrainingGraph) {
  OnnxImportOptions o;
  o.add_training_loss = true;
  OnnxModel m = import(gemm_relu(), o);
  ASSERT_TRUE(m.loss.valid());
  EXPECT_EQ(m.targets.shape(), (Shape{2, 4}));
  EXPECT_EQ(m.graph.find("loss").id(), m.loss.id());
  m.graph.backward(m.loss);
  for (Tensor p : m.graph.params()) EXPECT_TRUE(m.graph.grad(p).valid()) << p.name();
}

TEST(OnnxErrors, AnUnsupportedOpNamesTheNodeTheOpTheOpsetAndTheSupportedOps) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.node("Softplus", {"x"}, {"y"}, "my_softplus");
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  for (const char* part : {"my_softplus", "Softplus", "opset 13", "supported ops", "Gemm"})
    EXPECT_NE(e.find(part), std::string::npos) << part << " missing in: " << e;
}

TEST(OnnxErrors, AnUnsupportedOpsetIsRefusedWithTheSupportedRange) {
  OnnxModelBuilder b(9);
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("opset 9"), std::string::npos) << e;
  EXPECT_NE(e.find("11 to 17"), std::string::npos) << e;
}

TEST(OnnxErrors, AnUnsupportedAttributeValueIsNamedNeverApproximated) {
  OnnxModelBuilder b;
  b.input("x", {1, 4, 8, 8});
  auto* pool = b.node("MaxPool", {"x"}, {"y"}, "dilated");
  OnnxModelBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxModelBuilder::attr(pool, "dilations", std::vector<int64_t>{2, 2});
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("dilated"), std::string::npos) << e;
  EXPECT_NE(e.find("dilations="), std::string::npos) << e;
  EXPECT_NE(e.find("supported: "), std::string::npos) << e;
}

TEST(OnnxErrors, ADynamicBatchNeedsTheBatchOption) {
  OnnxModelBuilder b;
  b.input("x", {-1, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("dynamic batch"), std::string::npos) << e;
  EXPECT_NE(e.find("--batch"), std::string::npos) << e;
  // Or the batch of the data the caller holds for it (corun infer's --input files), which --batch must match.
  OnnxImportOptions o;
  o.input_batches["x"] = 3;
  EXPECT_EQ(import(b, o).inputs[0].shape(), (Shape{3, 3}));
  o.batch = 2;
  const std::string d = error_of([&] { import(b, o); });
  EXPECT_NE(d.find("'x' holds a batch of 3, but --batch is 2"), std::string::npos) << d;
}

// Issue 52 item 4: corun infer --onnx and serve-bench --onnx cannot bound a file's sizes from their flags, so
// they cap the tensors (set_tensor_memory_limit): a --batch too large is refused before the tensor is
// allocated, naming it, the total and the limit, instead of growing the process until the kernel kills it.
TEST(OnnxErrors, AHugeBatchIsRefusedByTheTensorCapBeforeItIsAllocated) {
  OnnxModelBuilder b;
  b.input("x", {-1, 1024, 1024});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  OnnxImportOptions o;
  o.batch = 100000;  // 400 GiB of input
  set_tensor_memory_limit(64.0 * (1 << 20), "a test's limit", "lower --batch");
  const std::string msg = error_of([&] { import(b, o); });
  set_tensor_memory_limit(std::numeric_limits<double>::infinity(), "", "");
  EXPECT_NE(msg.find("the tensor 'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("more than the 64.0 MiB available (a test's limit); lower --batch"), std::string::npos) << msg;
  o.batch = 2;  // and a batch that fits is imported as before, under the same cap
  set_tensor_memory_limit(64.0 * (1 << 20), "a test's limit", "lower --batch");
  EXPECT_EQ(error_of([&] { import(b, o); }), "");
  set_tensor_memory_limit(std::numeric_limits<double>::infinity(), "", "");
}

TEST(OnnxErrors, AShapeTheFileDeclaresOtherwiseIsAnError) {
  OnnxModelBuilder b = gemm_relu();
  b.declare("h", {2, 5});
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("'h'"), std::string::npos) << e;
  EXPECT_NE(e.find("[2, 5]"), std::string::npos) << e;
}

TEST(OnnxErrors, ShapesThatDoNotBroadcastAreRefusedNamingTheNode) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.input("z", {2, 2});
  b.node("Mul", {"x", "z"}, {"y"}, "scale");
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("scale"), std::string::npos) << e;
  EXPECT_NE(e.find("broadcast"), std::string::npos) << e;
}

class OnnxFiles : public testing::OnnxDirTest {
 protected:
  OnnxFiles() : OnnxDirTest("corun-onnx-test-") {}
};

TEST_F(OnnxFiles, AWholeFileImportsAndATruncatedOneIsAnIoError) {
  const OnnxModelBuilder b = gemm_relu();
  b.save(path("m.onnx"));
  EXPECT_EQ(import_onnx(path("m.onnx")).find("y").shape(), (Shape{2, 4}));
  const std::string bytes = b.model.SerializeAsString();
  std::ofstream(path("cut.onnx"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    import_onnx(path("cut.onnx"));
    FAIL() << "a truncated file imported";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::io_error);
    EXPECT_NE(std::string(e.what()).find("cut.onnx"), std::string::npos) << e.what();
  }
}

TEST_F(OnnxFiles, AFileThatIsNotOnnxIsAnIoError) {
  std::ofstream(path("notes.onnx")) << "these are my notes, not a model\n";
  const std::string e = error_of([&] { import_onnx(path("notes.onnx")); });
  EXPECT_NE(e.find("not"), std::string::npos) << e;
  EXPECT_NE(e.find("notes.onnx"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { import_onnx(path("absent.onnx")); }), "");
}

TEST_F(OnnxFiles, ExternalDataIsReadAndItsAbsenceNamesTheFile) {
  OnnxModelBuilder b = gemm_relu();
  onnx::TensorProto* w = b.graph->mutable_initializer(0);
  const std::vector<float> values(w->float_data().begin(), w->float_data().end());
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  b.save(path("ext.onnx"));
  const std::string e = error_of([&] { import_onnx(path("ext.onnx")); });
  EXPECT_NE(e.find("weights.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("fc/weight"), std::string::npos) << e;
  std::ofstream(path("weights.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  Graph g = import_onnx(path("ext.onnx"));
  const float* wv = g.data(g.find("fc_weight"));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(wv[i], values[i]);
}

// gemm_relu with its weight moved to external data at `location` (offset and length when given), and the
// weight's bytes.
struct ExternalWeight {
  OnnxModelBuilder b = gemm_relu();
  std::string bytes;
  explicit ExternalWeight(const std::string& location, const std::string& offset = "",
                          const std::string& length = "") {
    onnx::TensorProto* w = b.graph->mutable_initializer(0);
    const std::vector<float> values(w->float_data().begin(), w->float_data().end());
    bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair{"location", location}, {"offset", offset}, {"length", length}}) {
      if (value.empty()) continue;
      auto* kv = w->add_external_data();
      kv->set_key(key);
      kv->set_value(value);
    }
  }
};

// The message of importing `file`, which must fail with an io_error naming ExternalWeight's initializer.
std::string io_error_naming_the_weight(const std::string& file) {
  try {
    import_onnx(file);
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::io_error) << e.what();
    EXPECT_NE(std::string(e.what()).find("'fc/weight'"), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << file << " imported";
  return "";
}

// Issue 52: a location was joined to the model's folder as it was, so '../secret.bin', an absolute path or a
// symbolic link out of the folder were read and used as weights (exit 0). Each is an io_error naming the
// initializer and the location, as ONNX's checker refuses them; a link inside the folder still imports.
TEST_F(OnnxFiles, ExternalDataOutsideTheModelFolderIsRefused) {
  fs::create_directories(dir_ / "model" / "sub");
  const std::string secret = path("secret.bin");
  std::ofstream(secret, std::ios::binary) << ExternalWeight("x").bytes;
  fs::create_symlink(secret, dir_ / "model" / "link.bin");
  fs::create_symlink(dir_, dir_ / "model" / "up");
  for (const std::string& location : {std::string("../secret.bin"), secret, std::string("sub/../../secret.bin"),
                                      std::string("link.bin"), std::string("up/secret.bin"),
                                      std::string("./../secret.bin")}) {
    SCOPED_TRACE(location);
    ExternalWeight m(location);
    m.b.save(path("model/m.onnx"));
    const std::string msg = io_error_naming_the_weight(path("model/m.onnx"));
    EXPECT_NE(msg.find("location '" + location + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("model's folder"), std::string::npos) << msg;
  }
  // Inside the folder: a plain file, one in a subfolder and a link to a file in the folder all import.
  std::ofstream(path("model/w.bin"), std::ios::binary) << ExternalWeight("x").bytes;
  std::ofstream(path("model/sub/w.bin"), std::ios::binary) << ExternalWeight("x").bytes;
  fs::create_symlink("w.bin", dir_ / "model" / "alias.bin");
  for (const char* location : {"w.bin", "sub/w.bin", "./sub/../w.bin", "alias.bin"}) {
    SCOPED_TRACE(location);
    ExternalWeight m(location);
    m.b.save(path("model/m.onnx"));
    Graph g = import_onnx(path("model/m.onnx"));
    EXPECT_EQ(g.data(g.find("fc_weight"))[0], 1.0f);
  }
}

// Offsets and lengths past the end of the data file, and ones that are not whole numbers (std::stoll took
// "12abc" as 12 and threw std::invalid_argument, not a corun::Error, on "abc").
TEST_F(OnnxFiles, ExternalDataOffsetsAndLengthsBeyondTheFileAreRefused) {
  const std::string bytes = ExternalWeight("x").bytes;  // 48 bytes
  std::ofstream(path("w.bin"), std::ios::binary) << bytes;
  struct Case {
    const char *offset, *length, *want;
  };
  for (const Case& c : {Case{"49", "", "past the end"}, Case{"4", "48", "runs past the end"},
                        Case{"0", "49", "runs past the end"}, Case{"999999999999999999", "", "past the end"},
                        Case{"-4", "", "not a non-negative whole number"},
                        Case{"0", "12abc", "not a non-negative whole number"},
                        Case{"abc", "", "not a non-negative whole number"},
                        Case{"0", "99999999999999999999", "not a non-negative whole number"}}) {
    SCOPED_TRACE(std::string(c.offset) + " " + c.length);
    ExternalWeight m("w.bin", c.offset, c.length);
    m.b.save(path("m.onnx"));
    const std::string msg = io_error_naming_the_weight(path("m.onnx"));
    EXPECT_NE(msg.find(c.want), std::string::npos) << msg;
  }
  ExternalWeight whole("w.bin", "0", "48");
  whole.b.save(path("m.onnx"));
  EXPECT_NO_THROW(import_onnx(path("m.onnx")));
}

// Issue 52: NaN or inf in an initializer is refused at import, as `corun train --load` refuses such a
// parameter file, unless OnnxImportOptions::allow_non_finite (--allow-non-finite) is set.
TEST(OnnxImport, NonFiniteInitializersAreRefusedUnlessAllowed) {
  for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    OnnxModelBuilder b = gemm_relu();
    b.graph->mutable_initializer(1)->set_float_data(2, bad);  // fc.bias element 2
    const std::string e = error_of([&] { import(b); });
    EXPECT_NE(e.find("initializer 'fc.bias'"), std::string::npos) << e;
    EXPECT_NE(e.find("not finite: element 2 is"), std::string::npos) << e;
    EXPECT_NE(e.find("--allow-non-finite"), std::string::npos) << e;
    OnnxImportOptions o;
    o.allow_non_finite = true;
    OnnxModel m = import(b, o);
    EXPECT_EQ(std::isnan(bad), std::isnan(m.graph.data(m.graph.find("fc.bias"))[2]));
  }
}

// Sizes no memory holds are refused naming the value, before any size computed from them could wrap around
// (issue 52 item 7): an input dimension over 2^60, and an initializer whose element count overflows 64 bits
// (it wrapped to 2^32 and was reported as a truncated file).
TEST(OnnxErrors, SizesOver2To60NameTheInputOrTheInitializer) {
  OnnxModelBuilder big_input = gemm_relu();
  big_input.graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(
      int64_t{1} << 61);
  const std::string e = error_of([&] { import(big_input); });
  EXPECT_NE(e.find("graph input 'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("exceeds 2^60"), std::string::npos) << e;
  OnnxModelBuilder wraps = gemm_relu();
  auto* bias = wraps.graph->mutable_initializer(1);
  bias->clear_dims();
  bias->add_dims(int64_t{1} << 32);
  bias->add_dims((int64_t{1} << 32) + 1);  // the product wraps to 2^32 in 64 bits
  const std::string w = error_of([&] { import(wraps); });
  EXPECT_NE(w.find("ONNX tensor 'fc.bias'"), std::string::npos) << w;
  EXPECT_NE(w.find("exceeds 2^60"), std::string::npos) << w;
  EXPECT_EQ(w.find("truncated"), std::string::npos) << w;
}

}  // namespace
}  // namespace corun
