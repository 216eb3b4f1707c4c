// save_onnx_model (include/corun/onnx.hpp): the source file's ModelProto again, with the trained initializers
// replaced, written atomically. Only initializers change: the nodes, inputs, outputs, opsets and metadata stay
// as the exporter wrote them, so the file is the user's own model, trained, and PyTorch can load its
// initializers back by name (tests/onnx/test_save_onnx.py).
#include "onnx/convert.hpp"
#include "onnx/importer.hpp"

#include <corun/onnx.hpp>

#include "base/check.hpp"
#include "base/files.hpp"

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace corun {
namespace {

using TP = onnx::TensorProto;

std::string written_as(const std::string& out) { return "cannot write the trained ONNX model '" + out + "': "; }

// The initializer's element count from its extents; a damaged file's extents that overflow are an io_error.
int64_t element_count(const TP& t, const std::string& source) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    CORUN_CHECK(d >= 0 && !__builtin_mul_overflow(n, d, &n), Status::io_error,
                "ONNX file '" << source << "': initializer '" << t.name() << "' has extents whose element count "
                              << "is not a number of elements (a damaged file)");
  return n;
}

// `t` holds `values` as raw data of its own element type, inside the file. ONNX's raw data is little-endian,
// as the hosts corun runs on (the importer reads it the same way).
void set_values(TP& t, const std::vector<float>& values, const std::string& source, const std::string& out) {
  std::string raw;
  if (t.data_type() == TP::FLOAT) {
    raw.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  } else if (t.data_type() == TP::DOUBLE) {
    const std::vector<double> wide(values.begin(), values.end());
    raw.assign(reinterpret_cast<const char*>(wide.data()), wide.size() * sizeof(double));
  } else {
    throw Error(Status::invalid_argument,
                "corun: " + written_as(out) + "initializer '" + t.name() + "' of '" + source + "' has element type " +
                    TP::DataType_Name(t.data_type()) + "; trained values are written as FLOAT or DOUBLE only");
  }
  t.clear_float_data();
  t.clear_double_data();
  t.clear_external_data();  // the trained values live in the file: the old data file holds the old ones
  t.clear_data_location();
  t.set_raw_data(std::move(raw));
}

// An initializer kept as it was but stored outside the source model: its bytes move into the file, whose
// folder may be another one (a relative location would then name a missing or a wrong file).
void inline_external_data(TP& t, const std::string& base_dir) {
  t.set_raw_data(onnx_import::external_bytes(t, base_dir));
  t.clear_external_data();
  t.clear_data_location();
}

// The trained tensors by name; a name given twice would make the written values depend on the order.
std::map<std::string, const OnnxTrainedTensor*> by_name(const std::vector<OnnxTrainedTensor>& trained,
                                                        const std::string& out) {
  std::map<std::string, const OnnxTrainedTensor*> m;
  for (const OnnxTrainedTensor& t : trained)
    CORUN_CHECK(m.emplace(t.name, &t).second, Status::invalid_argument,
                written_as(out) << "the trained tensor '" << t.name << "' is given twice");
  return m;
}

// torch.onnx.export writes equal initializers once, behind one Identity node per duplicate named after its
// PyTorch parameter, and the importer makes each such output a parameter (or statistic) of its own
// (Converter::untied_output), trained apart from the others. Written back, each trained one becomes an
// initializer under its own name, with the source's type and dims, and its Identity node goes: the file then
// holds every PyTorch name as an initializer, as if the exporter had not merged them. Chains of Identities
// are followed; the values are set with the other initializers' (replace_initializers).
void untie_identities(onnx::GraphProto& graph, const std::map<std::string, const OnnxTrainedTensor*>& trained) {
  std::map<std::string, TP> typed;  // float initializers and untied Identity outputs: type and dims
  for (const TP& init : graph.initializer())
    if (init.data_type() == TP::FLOAT || init.data_type() == TP::DOUBLE) typed[init.name()] = init;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::vector<TP> untied;
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    const auto src = node.op_type() == "Identity" && node.input_size() == 1 && node.output_size() == 1
                         ? typed.find(node.input(0)) : typed.end();
    if (src == typed.end() || typed.count(node.output(0))) {
      kept.Add(std::move(node));
      continue;
    }
    TP like;
    like.set_name(node.output(0));
    like.set_data_type(src->second.data_type());
    *like.mutable_dims() = src->second.dims();
    typed[node.output(0)] = like;  // a later Identity may read it
    if (trained.count(onnx_value_name(node.output(0)))) untied.push_back(std::move(like));
    else kept.Add(std::move(node));
  }
  graph.mutable_node()->Swap(&kept);
  for (TP& t : untied) graph.add_initializer()->Swap(&t);
}

// Every initializer named in `trained` gets its values; returns the trained names no initializer has.
std::vector<std::string> replace_initializers(onnx::GraphProto& graph, const std::vector<OnnxTrainedTensor>& trained,
                                              const std::string& source, const std::string& out) {
  const std::map<std::string, const OnnxTrainedTensor*> values = by_name(trained, out);
  untie_identities(graph, values);
  const std::string base_dir = onnx_import::model_folder(source);
  std::map<std::string, std::string> written;  // corun name -> the ONNX initializer that took its values
  for (TP& init : *graph.mutable_initializer()) {
    const std::string name = onnx_value_name(init.name());
    const auto it = values.find(name);
    if (it == values.end()) {
      if (init.data_location() == TP::EXTERNAL) inline_external_data(init, base_dir);
      continue;
    }
    const auto [prev, fresh] = written.emplace(name, init.name());
    CORUN_CHECK(fresh, Status::invalid_argument,
                written_as(out) << "the initializers '" << prev->second << "' and '" << init.name() << "' of '"
                                << source << "' both are corun's '" << name << "'; rename one in the exporter");
    const std::vector<float>& v = it->second->values;
    CORUN_CHECK(element_count(init, source) == static_cast<int64_t>(v.size()), Status::invalid_argument,
                written_as(out) << "initializer '" << init.name() << "' of '" << source << "' has "
                                << element_count(init, source) << " elements but the trained tensor '" << name
                                << "' has " << v.size() << " (was the model file changed during the run?)");
    set_values(init, v, source, out);
  }
  std::vector<std::string> missing;
  for (const auto& [name, t] : values)
    if (!written.count(name)) missing.push_back(name);
  return missing;
}

}  // namespace

void save_onnx_model(const std::string& source_path, const std::string& out_path,
                     const std::vector<OnnxTrainedTensor>& trained) {
  onnx::ModelProto model = onnx_import::read_model_file(source_path);
  const std::vector<std::string> missing =
      replace_initializers(*model.mutable_graph(), trained, source_path, out_path);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "'" : ", '") + m + "'";
    throw Error(Status::invalid_argument,
                "corun: " + written_as(out_path) + "the trained tensor(s) " + list + " have no initializer of that " +
                    "name in '" + source_path + "' (the import made them: folded, fused or renamed), so the file " +
                    "would not hold them; save the parameters with --save DIR (.npy files) instead");
  }
  // One protobuf message (the whole file without external data) cannot exceed 2 GiB: Serialize would fail.
  const size_t bytes = model.ByteSizeLong();
  CORUN_CHECK(bytes <= static_cast<size_t>(INT_MAX), Status::invalid_argument,
              written_as(out_path) << "it would be " << bytes << " bytes, over protobuf's 2 GiB limit for a model "
                                   << "with its weights inside; save the parameters with --save DIR (.npy files)");
  std::string contents;
  CORUN_CHECK(model.SerializeToString(&contents), Status::runtime_error,
              written_as(out_path) << "protobuf could not serialize the model");
  write_file_atomically(out_path, contents, "the trained ONNX model");
}

}  // namespace corun
