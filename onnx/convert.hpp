// onnx/convert.hpp — what an op converter (onnx/ops/<family>.cpp) sees: the node, its operands (graph
// values or folded constants), its attributes, and where its results go. One converter per op_type, listed
// in the table of onnx/ops/registry.cpp; wiring a new op is one function and one row.
#pragma once

#include <corun/graph.hpp>
#include <corun/onnx.hpp>

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace corun::onnx_import {

/// A tensor known at import time: an initializer, a Constant node's value, or a folded result. Integers
/// (shapes, indices, axes) and floats are both held as doubles; `integer` tells which the file meant.
struct Constant {
  std::vector<int64_t> dims;  ///< empty: a scalar
  std::vector<double> values;
  bool integer = false;
  int64_t numel() const;
  /// values[i] as an integer, saturated to the int64 range (ONNX writes INT64_MAX for "to the end").
  int64_t as_int(size_t i) const;
  std::vector<int64_t> ints() const;
};

/// A name of the ONNX graph: a graph value, a constant, or both (an initializer used as an operand is
/// turned into a parameter the first time a converter asks for it as a tensor).
struct Entry {
  Tensor tensor;                  ///< invalid until the value exists in the graph
  bool has_constant = false;
  Constant constant;
  bool is_initializer = false;
};

class Converter;
using ConvertFn = void (*)(Converter&);

/// One row of the table: the op_type, its converter, and what of it is supported (error messages and
/// docs/onnx.md say the same).
struct OpRow {
  const char* op_type;
  ConvertFn convert;
  const char* supported;
};
/// The table (onnx/ops/registry.cpp), and the row of an op_type or nullptr.
const std::vector<OpRow>& op_table();
const OpRow* find_op(const std::string& op_type);

/// The importer's state while it walks the nodes, and the services converters use.
class Converter {
 public:
  Converter(Graph& graph, std::map<std::string, Entry>& env, int opset, bool training = false)
      : graph_(graph), env_(env), opset_(opset), training_(training) {}

  /// Starts converting `node` (its row gives the "supported" text of error messages).
  void begin(const onnx::NodeProto& node, const OpRow* row);
  Graph& graph() { return graph_; }
  int opset() const { return opset_; }
  /// Whether the import is for training (OnnxImportOptions::training).
  bool training() const { return training_; }
  const onnx::NodeProto& node() const { return *node_; }
  /// A node name for the graph: the ONNX output name of output `k`, made file-safe.
  std::string value_name(int k = 0) const;

  int num_inputs() const;   ///< inputs present (trailing empty names are absent)
  bool has_input(int i) const;
  /// Input i as a graph value (an initializer becomes a parameter; a folded constant a constant value).
  Tensor tensor(int i);
  /// Input i as a tensor operand of broadcasting arithmetic: tensor(i), except that a rank-0 constant (a
  /// scalar, corun tensors have rank 1 to 4) becomes a [1] tensor, which broadcasts the same way.
  Tensor operand(int i);
  /// Input i, an initializer or constant, as a Graph::state tensor under its ONNX name holding the file's
  /// values (BatchNormalization's running statistics: saved with the parameters, never trained).
  Tensor state_tensor(int i);
  /// A fixed (never trained) tensor of `shape` filled with `fill`, named "<value_name()>.<suffix>".
  Tensor filled(const Shape& shape, float fill, const std::string& suffix);
  /// Input i when it is known at import time, else nullptr.
  const Constant* constant(int i) const;
  /// Input i, which must be known at import time (`what`: "shape", "axes" ...); an error otherwise.
  const Constant& require_constant(int i, const char* what) const;
  /// Whether input i can be folded at import: a known constant that is not (yet) a graph value and not a
  /// float initializer (a parameter: folding would cut it off from its gradient).
  bool foldable(int i) const;
  /// The shape of input i (a graph value's or a constant's dims).
  std::vector<int64_t> input_dims(int i) const;

  bool has_attr(const char* name) const;
  int64_t attr_int(const char* name, int64_t fallback) const;
  float attr_float(const char* name, float fallback) const;
  std::string attr_string(const char* name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const char* name) const;
  const onnx::TensorProto* attr_tensor(const char* name) const;
  /// Fails unless every attribute of the node is in `known` (an attribute this importer does not read
  /// would otherwise be ignored: an approximation).
  void only_attrs(std::initializer_list<const char*> known) const;

  void set_output(int k, Tensor t);
  void set_output(int k, Constant c);
  /// Binds output k to an existing entry (Identity, a no-op Cast).
  void alias_output(int k, int input);
  /// As alias_output, but a float initializer is copied, not bound: output k becomes an initializer of its
  /// own, a separate parameter (or statistic) under its own name with the same values (Identity).
  void untied_output(int k, int input);

  /// Throws corun::Error naming the node, its op_type, the opset and the row's supported subset.
  [[noreturn]] void unsupported(const std::string& what) const;
  /// An attribute value outside the supported subset.
  [[noreturn]] void unsupported_attr(const char* attr, const std::string& value) const;

 private:
  const Entry& entry(int i) const;
  Graph& graph_;
  std::map<std::string, Entry>& env_;
  int opset_;
  bool training_;
  const onnx::NodeProto* node_ = nullptr;
  const OpRow* row_ = nullptr;
};

/// The bytes of an initializer stored outside the model (data_location EXTERNAL: location, offset, length),
/// read from the regular file inside `base_dir` it names; an io_error names the tensor otherwise.
std::string external_bytes(const onnx::TensorProto& t, const std::string& base_dir);
/// The Constant held by a TensorProto (initializer or attribute); `base_dir` resolves external data.
Constant read_tensor(const onnx::TensorProto& t, const std::string& base_dir);
/// Node `n`'s attribute `name`, or nullptr.
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const char* name);
/// ONNX axis (negative counts from the end) as 0..rank-1, or an error naming `what`.
int normalize_axis(const Converter& c, int64_t axis, int rank, const char* what);
std::string dims_text(const std::vector<int64_t>& dims);

}  // namespace corun::onnx_import
