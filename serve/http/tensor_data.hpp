// serve/http/tensor_data.hpp — one input tensor's values as a request carries them (JSON numbers, flat or nested,
// or little-endian bytes of the binary-data extension), checked and converted to the f32 the model server takes.
// Part of the protocol layer (protocol.hpp); every failure is a ProtocolError naming the value.
#pragma once

#include "base/json.hpp"
#include "serve/endpoint/model_backend.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace corun::serve::http {

/// A KServe v2 datatype the protocol layer takes for an input of the model.
struct WireType {
  std::string name;   ///< "FP32", "INT64", "INT32"
  size_t bytes = 4;   ///< one element in the binary-data extension
  bool integer = false;
};

/// The wire type `given` for an input of the model's `spec`: FP32 for FP32 inputs, INT64 or INT32 for INT64 (token
/// id) inputs. `where` names the field ("inputs[0].datatype"). Throws ProtocolError naming the accepted ones.
WireType wire_type_for(const TensorSpec& spec, const std::string& given, const std::string& where);

/// The values of a JSON "data" member (`where`: "inputs[0].data"), flat or nested as `shape`, into `out` (count
/// elements, the product of shape). Integers are range-checked against the spec's index_limit and must be exact
/// in f32; FP32 values must be finite in f32.
void read_json_values(const json::Value& data, const std::vector<int64_t>& shape, size_t count, const TensorSpec& spec,
                      const WireType& type, const std::string& where, std::vector<float>& out);

/// The same from `bytes` (exactly count * type.bytes of them, little-endian).
void read_binary_values(std::string_view bytes, size_t count, const TensorSpec& spec, const WireType& type,
                        const std::string& where, std::vector<float>& out);

/// The text of a JSON value for a message, cut to a readable length.
std::string quoted_json(const json::Value& v);

}  // namespace corun::serve::http
