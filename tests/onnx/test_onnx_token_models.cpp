// The importer's pieces for the token models of issue 19 (scripts/export-onnx.py transformer and
// text_similarity), on models written in C++: INT64 inputs (held as exact integers in f32, with the range of
// valid ids in OnnxModel::index_limits), integer shape arithmetic folded at import (PyTorch's chunk():
// Shape -> Gather -> Add -> Div -> Mul -> Slice, Div truncating), Expand (folded, and on a graph value), a
// scalar Gather index shared by two Gathers, and the text similarity model written as PyTorch exports it
// computing the built-in models::TextSimilarity's cosines from the same weights.
#include "onnx_test_helpers.hpp"

#include <corun/inline.hpp>
#include <corun/models/text_similarity.hpp>

#include <gtest/gtest.h>

#include <random>

namespace corun {
namespace {

using testing::error_of;
using testing::import;
using testing::OnnxModelBuilder;

void set_elem_type(OnnxModelBuilder& b, int input, int type) {
  b.graph->mutable_input(input)->mutable_type()->mutable_tensor_type()->set_elem_type(type);
}

// A Constant node holding one INT64 value, rank 0 (a scalar) or rank 1 ([1]).
void int_constant(OnnxModelBuilder& b, const std::string& name, int64_t v, bool scalar) {
  auto* n = b.node("Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(1);
  t->add_int64_data(v);
}

std::vector<float> read(const Graph& g, const std::string& name) {
  const Tensor t = g.find(name);
  return std::vector<float>(g.data(t), g.data(t) + t.shape().numel());
}

TEST(OnnxTokenModels, ChunkSplitPointsFoldWithIntegerDivision) {
  OnnxModelBuilder b;
  b.input("x", {2, 6});
  b.node("Shape", {"x"}, {"s"});
  int_constant(b, "one", 1, true);
  b.node("Gather", {"s", "one"}, {"n"});   // 6
  int_constant(b, "two", 2, true);
  b.node("Add", {"n", "two"}, {"n2"});     // 8
  int_constant(b, "three", 3, true);
  b.node("Div", {"n2", "three"}, {"q"});   // 8 / 3 = 2 (integer Div truncates)
  int_constant(b, "k", 1, false);
  b.node("Mul", {"q", "k"}, {"end"});      // [2]
  int_constant(b, "start", 0, false);
  int_constant(b, "axis", 1, false);
  b.node("Slice", {"x", "start", "end", "axis"}, {"y"});
  b.output("y", {2, 2});
  OnnxModel m = import(b);
  EXPECT_EQ(m.index_limits, std::vector<int64_t>{0});  // a float input
  const std::vector<float> y = testing::run(m, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, "y");
  EXPECT_EQ(y, (std::vector<float>{0, 1, 6, 7}));
}

TEST(OnnxTokenModels, ExpandFoldsConstantsAndBroadcastsGraphValues) {
  OnnxModelBuilder b;
  b.input("x", {1, 3});
  b.init_ints("shape", {2, 3});
  b.init("zero", {1}, {0.0f});
  b.node("Expand", {"zero", "shape"}, {"zeros"});  // folded: a constant [2, 3]
  b.node("Expand", {"x", "shape"}, {"rows"});      // a graph value: [1, 3] -> [2, 3]
  b.node("Add", {"rows", "zeros"}, {"y"});
  b.output("y", {2, 3});
  OnnxModel m = import(b);
  EXPECT_EQ(testing::run(m, {1, 2, 3}, "y"), (std::vector<float>{1, 2, 3, 1, 2, 3}));

  OnnxModelBuilder bad;
  bad.input("x", {2, 3});
  bad.init_ints("shape", {4, 3});
  bad.node("Expand", {"x", "shape"}, {"y"}, "my_expand");
  bad.output("y");
  const std::string e = error_of([&] { import(bad); });
  EXPECT_NE(e.find("'my_expand'"), std::string::npos) << e;
  EXPECT_NE(e.find("does not broadcast"), std::string::npos) << e;
}

TEST(OnnxTokenModels, IntegerInputsAreTokenIdsWithTheirTablesRowCount) {
  OnnxModelBuilder b;
  b.input("ids", {2, 3});
  set_elem_type(b, 0, onnx::TensorProto::INT64);
  b.init("table", {7, 2}, {0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61});
  b.node("Gather", {"table", "ids"}, {"y"});
  b.output("y", {2, 3, 2});
  OnnxModel m = import(b);
  EXPECT_EQ(m.index_limits, std::vector<int64_t>{7});
  EXPECT_EQ(testing::run(m, {6, 0, 1, 2, 3, 5}, "y"),
            (std::vector<float>{60, 61, 0, 1, 10, 11, 20, 21, 30, 31, 50, 51}));

  OnnxModelBuilder half;
  half.input("x", {2});
  set_elem_type(half, 0, onnx::TensorProto::FLOAT16);
  half.node("Relu", {"x"}, {"y"});
  half.output("y");
  const std::string e = error_of([&] { import(half); });
  EXPECT_NE(e.find("FLOAT16"), std::string::npos) << e;
  EXPECT_NE(e.find("INT64"), std::string::npos) << e;
}

// The text similarity model as torch.onnx.export writes scripts/export-onnx.py's (Gather, GRU, Gather of
// Y_h with scalar indices shared by both sentences, Concat, Mul, ReduceSum, Sqrt, Div) with the built-in
// model's weights: the same cosines.
TEST(OnnxTokenModels, TheTextSimilarityExportComputesTheBuiltInModelsCosines) {
  models::TextSimilarityConfig c;
  c.vocab = 20, c.embed = 4, c.hidden = 3, c.source_len = 5, c.target_len = 4, c.batch = 2;
  models::TextSimilarity built(c);
  built.init_params();
  const int64_t H = c.hidden;
  auto copy = [&](const std::string& name) { return read(built.graph, name); };
  OnnxModelBuilder b;
  b.input("source_ids", {c.source_len, c.batch});
  b.input("target_ids", {c.target_len, c.batch});
  set_elem_type(b, 0, onnx::TensorProto::INT64);
  set_elem_type(b, 1, onnx::TensorProto::INT64);
  b.init("embedding.weight", {c.vocab, c.embed}, copy("embedding"));
  b.init("W", {2, 3 * H, c.embed}, copy("gru.W"));
  b.init("R", {2, 3 * H, H}, copy("gru.R"));
  b.init("B", {2, 6 * H}, copy("gru.B"));
  b.init_ints("axes", {1});
  int_constant(b, "fw", 0, true);
  int_constant(b, "bw", 1, true);
  for (const std::string s : {"source", "target"}) {
    b.node("Gather", {"embedding.weight", s + "_ids"}, {s + ".x"});
    auto* gru = b.node("GRU", {s + ".x", "W", "R", "B"}, {s + ".y", s + ".h"});
    OnnxModelBuilder::attr(gru, "direction", std::string("bidirectional"));
    OnnxModelBuilder::attr(gru, "hidden_size", H);
    OnnxModelBuilder::attr(gru, "linear_before_reset", int64_t{1});
    b.node("Gather", {s + ".h", "fw"}, {s + ".fw"});
    b.node("Gather", {s + ".h", "bw"}, {s + ".bw"});
    OnnxModelBuilder::attr(b.node("Concat", {s + ".fw", s + ".bw"}, {s + ".code"}), "axis", int64_t{1});
  }
  auto sum = [&](const std::string& a, const std::string& x, const std::string& out) {
    b.node("Mul", {a, x}, {out + ".prod"});
    OnnxModelBuilder::attr(b.node("ReduceSum", {out + ".prod", "axes"}, {out}), "keepdims", int64_t{0});
  };
  sum("source.code", "target.code", "dot");
  sum("source.code", "source.code", "ss");
  sum("target.code", "target.code", "tt");
  b.node("Mul", {"ss", "tt"}, {"n2"});
  b.node("Sqrt", {"n2"}, {"n"});
  b.node("Div", {"dot", "n"}, {"similarity"});
  b.output("similarity", {c.batch});
  OnnxModel m = import(b);
  EXPECT_EQ(m.index_limits, (std::vector<int64_t>{c.vocab, c.vocab}));

  std::mt19937_64 rng(5);
  std::vector<float> src(static_cast<size_t>(c.source_len * c.batch)), tgt(static_cast<size_t>(c.target_len * c.batch));
  for (float& v : src) v = static_cast<float>(rng() % static_cast<uint64_t>(c.vocab));
  for (float& v : tgt) v = static_cast<float>(rng() % static_cast<uint64_t>(c.vocab));
  for (auto [g, s, t] : {std::tuple<Graph*, Tensor, Tensor>{&built.graph, built.source_ids, built.target_ids},
                         std::tuple<Graph*, Tensor, Tensor>{&m.graph, m.inputs[0], m.inputs[1]}}) {
    std::copy(src.begin(), src.end(), g->data(s));
    std::copy(tgt.begin(), tgt.end(), g->data(t));
    InlineRunner(*g).run();
  }
  const std::vector<float> want = read(built.graph, "similarity"), got = read(m.graph, "similarity");
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_NEAR(got[k], want[k], 1e-6) << "pair " << k;
    EXPECT_LE(std::abs(got[k]), 1.0f + 1e-6f);
  }
}

}  // namespace
}  // namespace corun
