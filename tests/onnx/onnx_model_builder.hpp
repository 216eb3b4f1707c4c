// tests/onnx/onnx_model_builder.hpp — ONNX ModelProtos written in C++ for the importer's tests (no torch).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace corun::testing {

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int opset = 13) {
    model.set_ir_version(8);
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("test");
  }
  /// A float input; an extent of -1 is the symbolic dimension "N".
  void input(const std::string& name, const std::vector<int64_t>& dims) { value_info(graph->add_input(), name, dims); }
  void output(const std::string& name, const std::vector<int64_t>& dims = {}) {
    value_info(graph->add_output(), name, dims);
  }
  void declare(const std::string& name, const std::vector<int64_t>& dims) { value_info(graph->add_value_info(), name, dims); }
  onnx::TensorProto* init(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
    return t;
  }
  void init_ints(const std::string& name, const std::vector<int64_t>& v) {
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                        const std::string& name = "") {
    onnx::NodeProto* n = graph->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph->node_size()) : name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  void save(const std::string& path) const {
    std::ofstream f(path, std::ios::binary);
    f << model.SerializeAsString();
  }

  onnx::ModelProto model;
  onnx::GraphProto* graph;

 private:
  static void value_info(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    if (dims.empty()) return;
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) dim->set_dim_param("N");
      else dim->set_dim_value(d);
    }
  }
};

}  // namespace corun::testing
