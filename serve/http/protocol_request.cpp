// An infer request's body parsed and checked against the model (protocol.hpp): the JSON header with the strict
// parser of base/json.hpp, then each input's shape before its values, so that a declared size is checked
// against the model and the body before anything is allocated for it.
#include "serve/http/protocol.hpp"

#include "serve/http/tensor_data.hpp"

#include <corun/error.hpp>

#include <algorithm>
#include <cstdint>
#include <set>

namespace corun::serve::http {

namespace {

// The members each object of the request may have: anything else is most likely a misspelt one.
const std::set<std::string> kRequestKeys = {"id", "parameters", "inputs", "outputs"};
const std::set<std::string> kInputKeys = {"name", "shape", "datatype", "parameters", "data"};
const std::set<std::string> kOutputKeys = {"name", "parameters"};

std::string key_list(const std::set<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

void check_object(const json::Value& v, const std::set<std::string>& keys, const std::string& where) {
  if (!v.is_object()) throw ProtocolError(where + " must be a JSON object, not " + quoted_json(v));
  for (const auto& item : v.items())
    if (!keys.count(item.key()))
      throw ProtocolError(where + " has an unknown member '" + item.key() + "' (the protocol's: " + key_list(keys) + ")");
}

const json::Value* find_parameter(const json::Value& owner, const std::string& key, const std::string& where) {
  if (!owner.contains("parameters")) return nullptr;
  const json::Value& params = owner["parameters"];
  if (!params.is_object()) throw ProtocolError(where + ".parameters must be a JSON object, not " + quoted_json(params));
  return params.contains(key) ? &params[key] : nullptr;
}

bool bool_parameter(const json::Value& owner, const std::string& key, const std::string& where) {
  const json::Value* v = find_parameter(owner, key, where);
  if (!v) return false;
  if (!v->is_boolean()) throw ProtocolError(where + ".parameters." + key + " must be true or false, not " + quoted_json(*v));
  return v->get<bool>();
}

// Triton's convention: priority is a level, 1 the highest, 0 (or absent) the model's default. corun has two
// levels: 1 (or true) is latency-critical, every other level runs at the default.
bool read_priority(const json::Value& doc) {
  const json::Value* v = find_parameter(doc, "priority", "request");
  if (!v) return false;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0))
    return v->get<uint64_t>() == 1;
  throw ProtocolError("parameters.priority must be an unsigned integer (1 = latency-critical, 0 = default; "
                      "Triton's levels) or true/false, not " + quoted_json(*v));
}

// The shape of inputs[i] checked against the model's input; returns its element count. The count is bounded by
// the model's shape (rows <= max_batch) and by `body_bytes` (a JSON value takes at least one byte), so that the
// caller may allocate it.
size_t checked_count(const json::Value& shape, const TensorSpec& spec, int max_batch, size_t body_bytes,
                     const std::string& where, std::vector<int64_t>& out) {
  if (!shape.is_array()) throw ProtocolError(where + " must be an array of integers, not " + quoted_json(shape));
  const std::string mismatch = where + ": " + quoted_json(shape) + " but model input '" + spec.name + "' is " +
                               shape_text(spec.shape);
  if (shape.size() != spec.shape.size()) throw ProtocolError(mismatch);
  out.clear();
  uint64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const json::Value& dim = shape[d];
    if (!dim.is_number_integer() || dim.get<int64_t>() < 1 || (dim.is_number_unsigned() && dim.get<uint64_t>() > INT64_MAX))
      throw ProtocolError(where + "[" + std::to_string(d) + "] must be a positive integer, not " + quoted_json(dim));
    const int64_t n = dim.get<int64_t>();
    if (d == 0 && spec.shape[0] == -1 && n > max_batch)
      throw ProtocolError(mismatch + ": " + std::to_string(n) + " rows, more than the server's --max-batch " +
                          std::to_string(max_batch));
    if (spec.shape[d] != -1 && n != spec.shape[d]) throw ProtocolError(mismatch);
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(n), &count) || count > body_bytes)
      throw ProtocolError(where + ": " + quoted_json(shape) + " declares more values than the body of " +
                          std::to_string(body_bytes) + " bytes can hold");
    out.push_back(n);
  }
  return static_cast<size_t>(count);
}

// Cuts the bytes after the JSON header among the inputs that declared binary_data_size, in request order.
class BinaryTail {
 public:
  explicit BinaryTail(std::string_view bytes) : bytes_(bytes) {}

  std::string_view take(size_t n, const std::string& where) {
    if (n > bytes_.size() - used_)
      throw ProtocolError(where + ".parameters.binary_data_size: " + std::to_string(n) + " bytes, but only " +
                          std::to_string(bytes_.size() - used_) + " are left after the JSON header");
    std::string_view part = bytes_.substr(used_, n);
    used_ += n;
    return part;
  }

  void check_all_used() const {
    if (used_ != bytes_.size())
      throw ProtocolError("the body has " + std::to_string(bytes_.size() - used_) +
                          " bytes after the JSON header and the inputs' binary_data_size, which belong to no input");
  }

 private:
  std::string_view bytes_;
  size_t used_ = 0;
};

size_t binary_size(const json::Value& input, const std::string& where) {
  const json::Value* v = find_parameter(input, "binary_data_size", where);
  if (!v) return SIZE_MAX;
  if (!v->is_number_integer() || v->get<int64_t>() < 0)
    throw ProtocolError(where + ".parameters.binary_data_size must be a byte count, not " + quoted_json(*v));
  return v->get<size_t>();
}

RequestTensor read_input(const json::Value& input, const TensorSpec& spec, const ModelMetadata& model,
                         size_t body_bytes, BinaryTail& tail, const std::string& where) {
  if (!input.contains("shape") || !input.contains("datatype"))
    throw ProtocolError(where + " needs 'shape' and 'datatype' (model input '" + spec.name + "' is " +
                        spec.datatype + " " + shape_text(spec.shape) + ")");
  const json::Value& datatype = input["datatype"];
  if (!datatype.is_string()) throw ProtocolError(where + ".datatype must be a string, not " + quoted_json(datatype));
  const WireType type = wire_type_for(spec, datatype.get<std::string>(), where + ".datatype");
  RequestTensor t;
  t.name = spec.name;
  const size_t count = checked_count(input["shape"], spec, model.max_batch, body_bytes, where + ".shape", t.shape);
  const size_t binary = binary_size(input, where);
  if (binary == SIZE_MAX) {
    if (!input.contains("data"))
      throw ProtocolError(where + " has neither 'data' nor parameters.binary_data_size");
    read_json_values(input["data"], t.shape, count, spec, type, where + ".data", t.data);
    return t;
  }
  if (input.contains("data")) throw ProtocolError(where + " has both 'data' and parameters.binary_data_size");
  if (binary != count * type.bytes)
    throw ProtocolError(where + ".parameters.binary_data_size: " + std::to_string(binary) + " bytes, but " +
                        shape_text(t.shape) + " of " + type.name + " is " + std::to_string(count * type.bytes));
  read_binary_values(tail.take(binary, where), count, spec, type, where + " (binary data)", t.data);
  return t;
}

// The inputs in the model's order: each present once, none unknown, the same rows in each.
std::vector<RequestTensor> read_inputs(const json::Value& inputs, const ModelMetadata& model, size_t body_bytes,
                                       BinaryTail& tail) {
  if (!inputs.is_array()) throw ProtocolError("inputs must be an array of tensors, not " + quoted_json(inputs));
  std::vector<RequestTensor> out(model.inputs.size());
  std::vector<bool> seen(model.inputs.size(), false);
  int64_t rows = 0;  // of the first input given: every other must have as many
  std::string names;
  for (const TensorSpec& s : model.inputs) names += (names.empty() ? "'" : ", '") + s.name + "'";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string where = "inputs[" + std::to_string(i) + "]";
    check_object(inputs[i], kInputKeys, where);
    const json::Value& name = inputs[i].contains("name") ? inputs[i]["name"] : json::Value();
    if (!name.is_string()) throw ProtocolError(where + ".name must be a string, not " + quoted_json(name));
    const auto spec = std::find_if(model.inputs.begin(), model.inputs.end(),
                                   [&](const TensorSpec& s) { return s.name == name.get<std::string>(); });
    if (spec == model.inputs.end())
      throw ProtocolError(where + ".name: model '" + model.name + "' has no input " + quoted_json(name) +
                          "; its inputs: " + names);
    const size_t k = static_cast<size_t>(spec - model.inputs.begin());
    if (seen[k]) throw ProtocolError(where + ".name: input '" + spec->name + "' is given twice");
    seen[k] = true;
    out[k] = read_input(inputs[i], *spec, model, body_bytes, tail, where);
    if (rows == 0) rows = out[k].shape[0];
    if (out[k].shape[0] != rows)
      throw ProtocolError(where + ".shape: " + shape_text(out[k].shape) + " has " + std::to_string(out[k].shape[0]) +
                          " rows, the inputs before it " + std::to_string(rows) + " (every input has the same rows)");
  }
  for (size_t k = 0; k < seen.size(); ++k)
    if (!seen[k])
      throw ProtocolError("inputs: model input '" + model.inputs[k].name + "' (" + model.inputs[k].datatype + " " +
                          shape_text(model.inputs[k].shape) + ") is missing");
  return out;
}

std::vector<RequestedOutput> read_outputs(const json::Value& doc, const ModelMetadata& model) {
  const bool binary_default = bool_parameter(doc, "binary_data_output", "request");
  std::vector<RequestedOutput> out;
  if (!doc.contains("outputs")) {
    for (size_t k = 0; k < model.outputs.size(); ++k) out.push_back({k, binary_default});
    return out;
  }
  const json::Value& outputs = doc["outputs"];
  if (!outputs.is_array()) throw ProtocolError("outputs must be an array, not " + quoted_json(outputs));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string where = "outputs[" + std::to_string(i) + "]";
    check_object(outputs[i], kOutputKeys, where);
    const json::Value& name = outputs[i].contains("name") ? outputs[i]["name"] : json::Value();
    if (!name.is_string()) throw ProtocolError(where + ".name must be a string, not " + quoted_json(name));
    size_t k = 0;
    while (k < model.outputs.size() && model.outputs[k].name != name.get<std::string>()) ++k;
    if (k == model.outputs.size()) throw ProtocolError(where + ".name: model '" + model.name + "' has no output " + quoted_json(name));
    for (const RequestedOutput& o : out)
      if (o.index == k) throw ProtocolError(where + ".name: output " + quoted_json(name) + " is asked for twice");
    if (find_parameter(outputs[i], "classification", where))
      throw ProtocolError(where + ".parameters.classification is not supported: ask for the output's values");
    const bool asked = find_parameter(outputs[i], "binary_data", where) != nullptr;
    out.push_back({k, asked ? bool_parameter(outputs[i], "binary_data", where) : binary_default});
  }
  return out;
}

}  // namespace

size_t parse_header_length(const std::string& value, size_t body_size) {
  size_t n = 0;
  bool ok = !value.empty() && value.size() <= 19;
  for (char c : value) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (!ok || n == 0 || n > body_size)
    throw ProtocolError("Inference-Header-Content-Length: '" + value + "' must be the JSON header's size in bytes, "
                        "from 1 to the body's " + std::to_string(body_size));
  return n;
}

InferRequest parse_infer_request(std::string_view body, std::optional<size_t> json_length, const ModelMetadata& model) {
  const size_t header_bytes = json_length.value_or(body.size());
  json::Value doc;
  try {
    doc = json::parse(body.substr(0, header_bytes), "request body");
  } catch (const corun::Error& e) {
    std::string what = e.what();
    if (what.rfind("corun: ", 0) == 0) what = what.substr(7);
    throw ProtocolError(what);
  }
  check_object(doc, kRequestKeys, "the request");
  InferRequest request;
  if (doc.contains("id")) {
    if (!doc["id"].is_string()) throw ProtocolError("id must be a string, not " + quoted_json(doc["id"]));
    request.id = doc["id"].get<std::string>();
  }
  request.priority = read_priority(doc);
  if (!doc.contains("inputs")) throw ProtocolError("the request has no 'inputs'");
  BinaryTail tail(body.substr(header_bytes));
  request.inputs = read_inputs(doc["inputs"], model, body.size(), tail);
  tail.check_all_used();
  request.rows = request.inputs.empty() ? 0 : request.inputs[0].shape[0];
  request.outputs = read_outputs(doc, model);
  return request;
}

}  // namespace corun::serve::http
