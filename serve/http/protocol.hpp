// serve/http/protocol.hpp — the KServe v2 / Triton inference protocol's messages, without the socket: an infer
// request's body (JSON, or JSON plus raw tensor bytes: Triton's binary-data extension) parsed and checked against
// a model's metadata, and the response, the metadata and the errors formatted as the protocol wants them.
//
//   const InferRequest req = parse_infer_request(body, header_length, model.metadata());   // ProtocolError: 400
//   InferResult result = model.infer(req.inputs, req.priority).get();
//   const InferResponse res = format_infer_response(model.metadata(), req, result);
//
// The checks run before anything is allocated for a tensor: a declared shape is compared with the model's and
// its element count (overflow-safe) with the body's size first, so a request cannot make the server allocate
// more than its body's worth of floats. docs/serving-endpoint.md lists what is accepted.
#pragma once

#include "base/json.hpp"
#include "serve/endpoint/model_backend.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace corun::serve::http {

/// A request the protocol refuses: HTTP 400 with {"error": what()}. The message names the field that was wrong
/// ("inputs[0].shape: [2,3] but model input 'x' is [-1,3,224,224]").
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An output the request asked for (KServe v2 "outputs"), and whether its values go back as raw bytes.
struct RequestedOutput {
  size_t index = 0;  ///< into ModelMetadata::outputs
  bool binary = false;
};

struct InferRequest {
  std::optional<std::string> id;   ///< echoed back in the response
  bool priority = false;           ///< parameters.priority == 1 (Triton's highest level) or true
  std::vector<RequestTensor> inputs;  ///< in metadata().inputs order, every one with the same rows
  int64_t rows = 0;                   ///< those rows (the outputs have as many)
  std::vector<RequestedOutput> outputs;  ///< in the order asked; every output when the request named none
};

/// Parses and checks an infer request's body. `json_length`: the Inference-Header-Content-Length header's
/// value (nothing when absent: the whole body is JSON); parse_header_length() reads it. Throws ProtocolError.
InferRequest parse_infer_request(std::string_view body, std::optional<size_t> json_length,
                                 const ModelMetadata& model);

/// The Inference-Header-Content-Length header: a decimal byte count within the body. Throws ProtocolError.
size_t parse_header_length(const std::string& value, size_t body_size);

struct InferResponse {
  std::string body;
  std::string content_type;            ///< application/json, or application/octet-stream with binary outputs
  std::optional<size_t> json_length;   ///< the Inference-Header-Content-Length to send with binary outputs
};

/// The response to `request`: model_name, model_version, id, and the requested outputs, as JSON numbers or
/// (binary_data) as little-endian bytes after the JSON. Throws corun::Error when the result does not match the
/// model's outputs (a bug of the backend: 500).
InferResponse format_infer_response(const ModelMetadata& model, const InferRequest& request,
                                    const InferResult& result);

/// GET /v2/models/{name}: name, versions, platform, inputs and outputs with name, datatype and shape.
json::Value model_metadata_json(const ModelMetadata& model);

/// GET /v2: the server's name, version and the protocol extensions it implements.
json::Value server_metadata_json();

/// {"error": message}, the body of every error response.
std::string error_body(const std::string& message);

/// "[-1,3,224,224]": a shape as the messages and the protocol write it.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace corun::serve::http
