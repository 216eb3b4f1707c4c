// The protocol's answers (protocol.hpp): an infer response, JSON or with the binary-data extension, and the
// metadata and error bodies.
#include "serve/http/protocol.hpp"

#include "base/check.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef CORUN_SERVE_VERSION
#define CORUN_SERVE_VERSION "unknown"
#endif

namespace corun::serve::http {

namespace {

json::Value tensor_spec_json(const TensorSpec& spec) {
  return {{"name", spec.name}, {"datatype", spec.datatype}, {"shape", spec.shape}};
}

// A result's values in the output's datatype. Each f32 goes out as the double it equals, whose shortest text
// reads back to the same f32: a client gets the bits the model computed.
json::Value values_json(const RequestTensor& t, const TensorSpec& spec) {
  json::Value data = json::Value::array();
  const bool integer = spec.datatype == "INT64" || spec.datatype == "INT32";
  for (float v : t.data) data.push_back(integer ? json::Value(std::llround(v)) : json::Value(static_cast<double>(v)));
  return data;
}

template <class T>
void append_little_endian(T value, std::string& out) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

// The output's values as the binary-data extension sends them; returns their size.
size_t append_binary(const RequestTensor& t, const TensorSpec& spec, std::string& out) {
  const size_t before = out.size();
  for (float v : t.data) {
    if (spec.datatype == "INT64")
      append_little_endian<int64_t>(std::llround(v), out);
    else if (spec.datatype == "INT32")
      append_little_endian<int32_t>(static_cast<int32_t>(std::lround(v)), out);
    else
      append_little_endian<float>(v, out);
  }
  return out.size() - before;
}

void check_result(const ModelMetadata& model, const InferRequest& request, const InferResult& result) {
  CORUN_CHECK(result.outputs.size() == model.outputs.size(), Status::runtime_error,
              "model '" << model.name << "' returned " << result.outputs.size() << " outputs for its "
                        << model.outputs.size());
  const int64_t rows = request.rows;
  for (size_t k = 0; k < result.outputs.size(); ++k) {
    const RequestTensor& t = result.outputs[k];
    uint64_t count = 1;
    for (int64_t d : t.shape) count *= static_cast<uint64_t>(d);
    CORUN_CHECK(!t.shape.empty() && t.shape[0] == rows && count == t.data.size(), Status::runtime_error,
                "model '" << model.name << "' output '" << model.outputs[k].name << "' came back as "
                          << shape_text(t.shape) << " with " << t.data.size() << " values for a request of "
                          << rows << " rows");
  }
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t d = 0; d < shape.size(); ++d) out += (d ? "," : "") + std::to_string(shape[d]);
  return out + "]";
}

InferResponse format_infer_response(const ModelMetadata& model, const InferRequest& request,
                                    const InferResult& result) {
  check_result(model, request, result);
  json::Value doc = {{"model_name", model.name}, {"model_version", model.versions.empty() ? "" : model.versions[0]}};
  if (request.id) doc["id"] = *request.id;
  json::Value outputs = json::Value::array();
  std::string binary;
  for (const RequestedOutput& asked : request.outputs) {
    const TensorSpec& spec = model.outputs[asked.index];
    const RequestTensor& t = result.outputs[asked.index];
    json::Value out = {{"name", spec.name}, {"datatype", spec.datatype}, {"shape", t.shape}};
    if (asked.binary)
      out["parameters"] = {{"binary_data_size", append_binary(t, spec, binary)}};
    else
      out["data"] = values_json(t, spec);
    outputs.push_back(std::move(out));
  }
  doc["outputs"] = std::move(outputs);
  InferResponse response;
  response.body = json::dump(doc);
  response.content_type = "application/json";
  if (!binary.empty()) {
    response.json_length = response.body.size();
    response.body += binary;
    response.content_type = "application/octet-stream";
  }
  return response;
}

json::Value model_metadata_json(const ModelMetadata& model) {
  json::Value inputs = json::Value::array(), outputs = json::Value::array();
  for (const TensorSpec& s : model.inputs) inputs.push_back(tensor_spec_json(s));
  for (const TensorSpec& s : model.outputs) outputs.push_back(tensor_spec_json(s));
  return {{"name", model.name},  {"versions", model.versions}, {"platform", model.platform},
          {"inputs", inputs},    {"outputs", outputs},         {"max_batch_size", model.max_batch}};
}

json::Value server_metadata_json() {
  return {{"name", "corun"}, {"version", CORUN_SERVE_VERSION}, {"extensions", {"binary_tensor_data"}}};
}

std::string error_body(const std::string& message) { return json::dump(json::Value{{"error", message}}); }

}  // namespace corun::serve::http
