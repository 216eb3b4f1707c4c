// import_onnx: the file's graph inputs, initializers and nodes, in that order, into a corun Graph; each node
// through its op_type's converter (onnx/ops/registry.cpp); then the outputs, the value_info shape check and
// the optional training loss.
#include "onnx/importer.hpp"

#include "onnx/convert.hpp"
#include "onnx/gelu_pattern.hpp"
#include "onnx/hard_swish_pattern.hpp"
#include "onnx/pad_pool_pattern.hpp"

#include "base/check.hpp"
#include "base/files.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace corun {

std::string onnx_value_name(const std::string& onnx_name) {
  std::string out = onnx_name;
  for (char& ch : out)
    if (ch == '/' || ch == '\\' || ch == '\0') ch = '_';
  if (!out.empty() && out[0] == '.') out = "_" + out;
  return out;
}

namespace onnx_import {
namespace {

std::string where(const std::string& source) { return source.empty() ? "ONNX model" : "ONNX file '" + source + "'"; }

int default_opset(const onnx::ModelProto& m, const std::string& source) {
  int opset = -1;
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  }
  CORUN_CHECK(opset >= 0, Status::invalid_argument,
              where(source) << " imports no default-domain (ai.onnx) opset; supported: opsets " << kMinOpset << " to "
                            << kMaxOpset);
  CORUN_CHECK(opset >= kMinOpset && opset <= kMaxOpset, Status::invalid_argument,
              where(source) << " uses opset " << opset << "; supported: opsets " << kMinOpset << " to " << kMaxOpset
                            << " (re-export with torch.onnx.export(..., opset_version=13))");
  for (const auto& o : m.opset_import())
    CORUN_CHECK(o.domain().empty() || o.domain() == "ai.onnx", Status::invalid_argument,
                where(source) << " imports the opset domain '" << o.domain()
                              << "'; supported: the default domain (ai.onnx) only");
  return opset;
}

// The first dimension's symbol when it is symbolic ("batch_size"), for the value_info check.
struct InputShape {
  Shape shape;
  std::string batch_symbol;
  bool integer = false;  // INT64/INT32: token ids, held as exact integers in f32
};

// `batch`: the size of a dynamic batch dimension (resolve_batch); a fixed one must be --batch, if given.
InputShape input_shape(const onnx::ValueInfoProto& vi, const OnnxImportOptions& options, int batch,
                       const std::string& source) {
  const std::string name = vi.name();
  CORUN_CHECK(vi.type().has_tensor_type(), Status::invalid_argument,
              where(source) << ": graph input '" << name << "' is not a tensor; supported: float tensors");
  const auto& tt = vi.type().tensor_type();
  const bool integer = tt.elem_type() == onnx::TensorProto::INT64 || tt.elem_type() == onnx::TensorProto::INT32;
  CORUN_CHECK(tt.elem_type() == onnx::TensorProto::FLOAT || integer, Status::invalid_argument,
              where(source) << ": graph input '" << name << "' has element type "
                            << onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(tt.elem_type()))
                            << "; supported: FLOAT inputs, and INT64/INT32 ones (token ids, held as f32)");
  CORUN_CHECK(tt.has_shape(), Status::invalid_argument,
              where(source) << ": graph input '" << name << "' has no shape; re-export with a fixed input shape");
  const int rank = tt.shape().dim_size();
  CORUN_CHECK(rank >= 1 && rank <= kMaxDims, Status::invalid_argument,
              where(source) << ": graph input '" << name << "' has rank " << rank << "; supported: 1 to " << kMaxDims);
  InputShape out;
  out.integer = integer;
  int64_t dims[kMaxDims];
  for (int d = 0; d < rank; ++d) {
    const auto& dim = tt.shape().dim(d);
    if (dim.has_dim_value() && dim.dim_value() > 0) {
      dims[d] = dim.dim_value();
      if (d == 0 && options.batch > 0)
        CORUN_CHECK(dims[0] == options.batch, Status::invalid_argument,
                    where(source) << ": graph input '" << name << "' has the fixed batch size " << dims[0]
                                  << ", not --batch " << options.batch
                                  << "; drop --batch, or re-export with a dynamic batch axis (dynamic_axes)");
      continue;
    }
    const std::string symbol = dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "unknown";
    CORUN_CHECK(d == 0, Status::invalid_argument,
                where(source) << ": graph input '" << name << "' has a dynamic dimension " << d << " (" << symbol
                              << "); only the batch dimension (0) may be dynamic: re-export with a fixed shape");
    CORUN_CHECK(batch > 0, Status::invalid_argument,
                where(source) << ": graph input '" << name << "' has a dynamic batch dimension (" << symbol
                              << "); give the batch size (--batch N, OnnxImportOptions::batch) or its data "
                                 "(corun infer --input " << name << "=FILE.npy)");
    dims[0] = batch;
    out.batch_symbol = dim.has_dim_param() ? dim.dim_param() : "";
  }
  int64_t count = 1;  // Shape::of would refuse it too, without naming the input
  for (int d = 0; d < rank; ++d)
    CORUN_CHECK(!__builtin_mul_overflow(count, dims[d], &count) && count <= (int64_t{1} << 60),
                Status::invalid_argument,
                where(source) << ": graph input '" << name << "' has " << (d == 0 ? "a dimension" : "dimensions")
                              << " whose element count exceeds 2^60 (dimension " << d << " is " << dims[d]
                              << "): no memory holds it; re-export with the real sizes");
  out.shape = Shape::of(dims, rank);
  return out;
}

// Whether graph input `vi` has a symbolic or unknown first (batch) dimension.
bool has_dynamic_batch(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return false;
  const auto& shape = vi.type().tensor_type().shape();
  return shape.dim_size() > 0 && !(shape.dim(0).has_dim_value() && shape.dim(0).dim_value() > 0);
}

// The first extent of the data given for graph input `input` (OnnxImportOptions::input_batches), keyed by its
// ONNX name or by the name corun gives it (onnx_value_name); nullptr when none is given.
const int64_t* given_batch(const std::map<std::string, int64_t>& batches, const std::string& input) {
  if (const auto it = batches.find(input); it != batches.end()) return &it->second;
  for (const auto& [name, batch] : batches)
    if (onnx_value_name(name) == onnx_value_name(input)) return &batch;
  return nullptr;
}

// OnnxImportOptions::batch, or with 0 the batch of the data given for the inputs with a dynamic batch
// dimension (input_batches), which must agree with each other and with a batch given: the file's shape
// arithmetic and the other inputs follow one batch size.
int resolve_batch(const onnx::GraphProto& gp, const std::map<std::string, Entry>& env,
                  const OnnxImportOptions& options, const std::string& source) {
  int batch = options.batch;
  std::string from;  // the input whose data set `batch`
  for (const auto& vi : gp.input()) {
    const int64_t* given = given_batch(options.input_batches, vi.name());
    if (env.count(vi.name()) || given == nullptr || !has_dynamic_batch(vi)) continue;
    CORUN_CHECK(*given > 0 && *given <= (int64_t{1} << 30), Status::invalid_argument,
                where(source) << ": the data for graph input '" << vi.name() << "' has a first dimension of "
                              << *given << "; its batch dimension needs 1 to 2^30");
    if (batch == 0) {
      batch = static_cast<int>(*given);
      from = vi.name();
      continue;
    }
    CORUN_CHECK(*given == batch, Status::invalid_argument,
                where(source) << ": the data for graph input '" << vi.name() << "' holds a batch of " << *given
                              << ", but " << (from.empty() ? "--batch is " : "the data for '" + from + "' holds ")
                              << batch << "; " << (from.empty() ? "drop --batch (the batch is taken from the "
                                                                  "--input files) or give files of that batch"
                                                                : "give every input the same batch"));
  }
  return batch;
}

// The file's shape for a value (value_info or output) against the graph's: a fixed extent must match, the
// batch symbol must be the batch size, other symbols are not checked.
void check_value_info(const onnx::ValueInfoProto& vi, const std::map<std::string, Entry>& env,
                      const std::set<std::string>& batch_symbols, int batch, const std::string& source) {
  const auto it = env.find(vi.name());
  if (it == env.end() || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
  std::vector<int64_t> have;
  if (it->second.tensor.valid()) {
    const Shape s = it->second.tensor.shape();
    have.assign(s.dims.begin(), s.dims.begin() + s.rank);
  } else {
    have = it->second.constant.dims;
  }
  const auto& shp = vi.type().tensor_type().shape();
  bool ok = shp.dim_size() == static_cast<int>(have.size());
  for (int d = 0; ok && d < shp.dim_size(); ++d) {
    const auto& dim = shp.dim(d);
    if (dim.has_dim_value()) ok = dim.dim_value() == have[static_cast<size_t>(d)];
    else if (dim.has_dim_param() && batch_symbols.count(dim.dim_param())) ok = have[static_cast<size_t>(d)] == batch;
  }
  if (ok) return;
  std::string want = "[";
  for (int d = 0; d < shp.dim_size(); ++d) {
    const auto& dim = shp.dim(d);
    want += (d ? ", " : "") + (dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.dim_param().empty() ? "?" : dim.dim_param());
  }
  want += "]";
  throw Error(Status::invalid_argument, "corun: " + where(source) + ": value '" + vi.name() + "' has the shape " +
                                            dims_text(have) + " after import, but the file says " + want +
                                            " (an op converted with other semantics than the exporter's)");
}

// OnnxModel::index_limits of the integer inputs: the smallest extent, along the gathered axis, of the data
// of the Gather nodes that read the input directly as their indices.
void set_index_limits(const std::vector<onnx::NodeProto>& nodes, const std::map<std::string, Entry>& env,
                      OnnxModel& out) {
  for (size_t k = 0; k < out.inputs.size(); ++k) {
    if (out.index_limits[k] == 0) continue;
    for (const auto& node : nodes) {
      if (node.op_type() != "Gather" || node.input_size() < 2 || onnx_value_name(node.input(1)) != out.inputs[k].name())
        continue;
      const auto it = env.find(node.input(0));
      if (it == env.end()) continue;
      std::vector<int64_t> d = it->second.constant.dims;
      if (it->second.tensor.valid()) {
        const Shape s = it->second.tensor.shape();
        d.assign(s.dims.begin(), s.dims.begin() + s.rank);
      }
      int64_t axis = 0;
      for (const auto& a : node.attribute())
        if (a.name() == "axis") axis = a.i();
      if (axis < 0) axis += static_cast<int64_t>(d.size());
      if (axis < 0 || axis >= static_cast<int64_t>(d.size())) continue;
      const int64_t extent = d[static_cast<size_t>(axis)];
      if (out.index_limits[k] < 0 || extent < out.index_limits[k]) out.index_limits[k] = extent;
    }
  }
}

// As `corun train --load` refuses a parameter file holding NaN or inf (cli/non_finite.cpp): the model
// would compute NaN from the first step, and training reported a finite loss over it.
void check_finite_initializer(const std::string& name, const std::string& source, const Constant& c) {
  if (c.integer) return;  // read from integers: always finite
  for (size_t i = 0; i < c.values.size(); ++i) {
    const double v = c.values[i];
    CORUN_CHECK(std::isfinite(v), Status::invalid_argument,
                "initializer '" << name << "' in " << where(source) << " is not finite: element " << i << " is " << v
                                << "; training or inference from it gives nan outputs (pass --allow-non-finite "
                                   "to import it anyway)");
  }
}

// Every ONNX name becomes a corun name (onnx_value_name), which names files (checkpoints, parameter files):
// two ONNX names must not become the same one.
class NameClaims {
 public:
  explicit NameClaims(const std::string& source) : source_(source) {}
  void claim(const std::string& onnx_name) {
    const std::string n = onnx_value_name(onnx_name);
    const auto [it, fresh] = corun_names_.emplace(n, onnx_name);
    CORUN_CHECK(fresh || it->second == onnx_name, Status::invalid_argument,
                where(source_) << ": the names '" << it->second << "' and '" << onnx_name << "' both become '" << n
                               << "' as corun file names; rename one in the exporter");
  }

 private:
  const std::string& source_;
  std::map<std::string, std::string> corun_names_;  // corun name -> ONNX name
};

// The batch symbols of the inputs ("batch_size") and the batch size, for the value_info check.
struct Batch {
  std::set<std::string> symbols;
  int size = 0;
};

void read_initializers(const onnx::GraphProto& gp, const std::string& base_dir, const std::string& source,
                       const OnnxImportOptions& options, std::map<std::string, Entry>& env, NameClaims& names) {
  for (const auto& init : gp.initializer()) {
    names.claim(init.name());
    Entry& e = env[init.name()];
    e.has_constant = true;
    e.is_initializer = true;
    e.constant = read_tensor(init, base_dir);
    if (!options.allow_non_finite) check_finite_initializer(init.name(), source, e.constant);
  }
}

// The graph inputs that are not initializers, as the Graph's inputs.
Batch add_inputs(const onnx::GraphProto& gp, const std::string& source, const OnnxImportOptions& options,
                 std::map<std::string, Entry>& env, NameClaims& names, OnnxModel& out) {
  const int dynamic_batch = resolve_batch(gp, env, options, source);
  Batch batch;
  for (const auto& vi : gp.input()) {
    if (env.count(vi.name())) continue;  // IR < 4 lists initializers among the inputs
    names.claim(vi.name());
    const InputShape in = input_shape(vi, options, dynamic_batch, source);
    if (!in.batch_symbol.empty()) batch.symbols.insert(in.batch_symbol);
    batch.size = static_cast<int>(in.shape[0]);
    const Tensor t = out.graph.input(onnx_value_name(vi.name()), in.shape);
    env[vi.name()].tensor = t;
    out.inputs.push_back(t);
    out.index_limits.push_back(in.integer ? -1 : 0);
  }
  return batch;
}

// Each node through its op_type's converter; a refusal names the ONNX node.
void convert_nodes(const std::vector<onnx::NodeProto>& nodes, Converter& conv, NameClaims& names, int opset) {
  for (const auto& node : nodes) {
    const OpRow* row = find_op(node.op_type());
    conv.begin(node, row);
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      conv.unsupported("the domain '" + node.domain() + "' is not supported (default domain only)");
    if (!row) {
      std::string list;
      for (const OpRow& r : op_table()) list += (list.empty() ? "" : ", ") + std::string(r.op_type);
      throw Error(Status::invalid_argument, "corun: ONNX node '" + (node.name().empty() ? node.output(0) : node.name()) +
                                                "' (op_type " + node.op_type() + ", opset " +
                                                std::to_string(opset) + "): the op is not supported; supported ops: " +
                                                list + " (docs/onnx.md)");
    }
    for (const std::string& o : node.output())
      if (!o.empty()) names.claim(o);
    try {
      row->convert(conv);
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.find("ONNX node") != std::string::npos) throw;
      // A shape rule of the Graph refused the node: say which ONNX node it was.
      conv.unsupported(msg.rfind("corun: ", 0) == 0 ? msg.substr(7) : msg);
    }
  }
}

// The graph outputs, computed ones only, each checked against its declared shape and kept in the Graph.
void add_outputs(const onnx::GraphProto& gp, const std::map<std::string, Entry>& env, const Batch& batch,
                 const std::string& source, OnnxModel& out) {
  Graph& g = out.graph;
  for (const auto& vi : gp.output()) {
    const auto it = env.find(vi.name());
    CORUN_CHECK(it != env.end(), Status::invalid_argument,
                where(source) << ": graph output '" << vi.name() << "' is produced by no node");
    check_value_info(vi, env, batch.symbols, batch.size, source);
    CORUN_CHECK(it->second.tensor.valid(), Status::invalid_argument,
                where(source) << ": graph output '" << vi.name()
                              << "' is a constant (it does not depend on any input); supported: computed outputs");
    Tensor t = it->second.tensor;
    g.keep(t);
    // Found by its ONNX name even when its node named it otherwise (an LSTM's Y is "<node>.Y", Identity
    // passes another value through): a second name for the same value, as the Graph's multi-output ops do.
    if (!g.has(onnx_value_name(vi.name()))) g.add_name(t, onnx_value_name(vi.name()));
    out.output_names.push_back(vi.name());
    out.outputs.push_back(t);
  }
  CORUN_CHECK(!out.outputs.empty(), Status::invalid_argument, where(source) << " has no graph output");
}

// OnnxImportOptions::add_training_loss: softmax cross-entropy over the one output's [batch, classes] logits.
void add_training_loss(const std::string& source, const OnnxImportOptions& options, OnnxModel& out) {
  CORUN_CHECK(out.outputs.size() == 1, Status::invalid_argument,
              where(source) << " has " << out.outputs.size()
                            << " outputs; the training loss (softmax cross-entropy) needs exactly one");
  const Shape s = out.outputs[0].shape();
  CORUN_CHECK(s.rank == 2, Status::invalid_argument,
              where(source) << ": output '" << out.output_names[0] << "' has the shape " << s.str()
                            << "; the training loss (softmax cross-entropy) needs [batch, classes] logits");
  out.targets = out.graph.input(options.targets_name, s);
  out.loss = out.graph.softmax_xent(out.outputs[0], out.targets, "loss");
}

}  // namespace

OnnxModel import_model(const onnx::ModelProto& model, const std::string& base_dir, const std::string& source,
                       const OnnxImportOptions& options) {
  CORUN_CHECK(model.has_graph(), Status::io_error, where(source) << " has no graph: not an ONNX model");
  CORUN_CHECK(options.batch >= 0, Status::invalid_argument, "import_onnx: batch " << options.batch << " is negative");
  OnnxModel out;
  out.opset = default_opset(model, source);
  const onnx::GraphProto& gp = model.graph();
  std::map<std::string, Entry> env;
  NameClaims names(source);
  read_initializers(gp, base_dir, source, options, env, names);
  const Batch batch = add_inputs(gp, source, options, env, names, out);

  Converter conv(out.graph, env, out.opset, options.training);
  const std::vector<onnx::NodeProto> nodes =
      fold_pad_into_average_pool(fuse_hard_swish(fuse_erf_gelu(gp, base_dir), gp), gp, base_dir);
  convert_nodes(nodes, conv, names, out.opset);

  set_index_limits(nodes, env, out);
  for (const auto& vi : gp.value_info()) check_value_info(vi, env, batch.symbols, batch.size, source);
  add_outputs(gp, env, batch, source, out);
  if (options.add_training_loss) add_training_loss(source, options, out);
  return out;
}

}  // namespace onnx_import

namespace onnx_import {

onnx::ModelProto read_model_file(const std::string& path) {
  const std::string bytes = read_file(path);
  onnx::ModelProto model;
  CORUN_CHECK(!bytes.empty() && model.ParseFromString(bytes), Status::io_error,
              "cannot read ONNX file '" << path << "': " << (bytes.empty() ? "the file is empty" :
              "not a valid ONNX protobuf (truncated, or not an ONNX model)"));
  CORUN_CHECK(model.has_graph() && model.ir_version() > 0, Status::io_error,
              "cannot read ONNX file '" << path << "': it parses but has no graph or IR version (not an ONNX model)");
  return model;
}

std::string model_folder(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace onnx_import

OnnxModel import_onnx_model(const std::string& path, const OnnxImportOptions& options) {
  const onnx::ModelProto model = onnx_import::read_model_file(path);
  return onnx_import::import_model(model, onnx_import::model_folder(path), path, options);
}

Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  return std::move(import_onnx_model(path, options).graph);
}

}  // namespace corun
