// The values of one input tensor: JSON numbers or raw bytes into f32, with the checks that keep a request from
// sending the model a value it cannot hold (an integer id out of its table, a number beyond f32's range).
#include "serve/http/tensor_data.hpp"

#include "serve/http/protocol.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace corun::serve::http {

namespace {

// f32 holds every integer of magnitude up to 2^24 exactly; a larger id would reach the model rounded.
constexpr int64_t kExactInF32 = int64_t{1} << 24;

std::string allowed_ids(const TensorSpec& spec) {
  if (spec.index_limit > 0) return "[0, " + std::to_string(std::min(spec.index_limit, kExactInF32 + 1)) + ")";
  return "[-" + std::to_string(kExactInF32) + ", " + std::to_string(kExactInF32) + "] (exact in f32)";
}

// An integer id of an INT64 input, checked against the table it indexes.
float checked_id(int64_t v, const TensorSpec& spec, const std::string& where) {
  const bool in_table = spec.index_limit > 0 ? v >= 0 && v < spec.index_limit : true;
  if (!in_table || v > kExactInF32 || v < -kExactInF32)
    throw ProtocolError(where + ": " + std::to_string(v) + " is outside the ids input '" + spec.name +
                        "' takes, " + allowed_ids(spec));
  return static_cast<float>(v);
}

float checked_real(double v, const std::string& where) {
  if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
    throw ProtocolError(where + ": " + json::dump(json::Value(v)) +
                        " is not a finite FP32 value (NaN, infinities and values beyond 3.4e38 are refused)");
  return static_cast<float>(v);
}

float element_from_json(const json::Value& v, const TensorSpec& spec, const WireType& type, const std::string& where) {
  if (!v.is_number())
    throw ProtocolError(where + " must be a number (" + type.name + "), not " + quoted_json(v));
  if (!type.integer) return checked_real(v.get<double>(), where);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw ProtocolError(where + ": " + quoted_json(v) + " is outside " + type.name + "'s range");
  if (!v.is_number_integer())
    throw ProtocolError(where + " must be an integer (" + type.name + "), not " + quoted_json(v));
  const int64_t id = v.get<int64_t>();
  if (type.name == "INT32" && (id > INT32_MAX || id < INT32_MIN))
    throw ProtocolError(where + ": " + std::to_string(id) + " is outside INT32's range");
  return checked_id(id, spec, where);
}

// Nested data: every level an array of shape[depth] elements, numbers at the last one.
void flatten_nested(const json::Value& v, const std::vector<int64_t>& shape, size_t depth, const TensorSpec& spec,
                    const WireType& type, const std::string& where, std::vector<float>& out) {
  if (depth == shape.size()) {
    out.push_back(element_from_json(v, spec, type, where));
    return;
  }
  if (!v.is_array() || v.size() != static_cast<size_t>(shape[depth]))
    throw ProtocolError(where + " must be an array of " + std::to_string(shape[depth]) +
                        " elements (nested data follows the shape " + shape_text(shape) + "), not " + quoted_json(v));
  for (size_t i = 0; i < v.size(); ++i)
    flatten_nested(v[i], shape, depth + 1, spec, type, where + "[" + std::to_string(i) + "]", out);
}

template <class T>
T read_little_endian(const char* p) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, p, sizeof(T));
  uint64_t bits = 0;
  for (size_t i = 0; i < sizeof(T); ++i) bits |= static_cast<uint64_t>(b[i]) << (8 * i);
  T value;
  if constexpr (sizeof(T) == 4) {
    const auto narrow = static_cast<uint32_t>(bits);
    std::memcpy(&value, &narrow, 4);
  } else {
    std::memcpy(&value, &bits, 8);
  }
  return value;
}

}  // namespace

std::string quoted_json(const json::Value& v) {
  std::string text = json::dump(v);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

WireType wire_type_for(const TensorSpec& spec, const std::string& given, const std::string& where) {
  if (spec.datatype == "INT64") {
    if (given == "INT64") return {"INT64", 8, true};
    if (given == "INT32") return {"INT32", 4, true};
    throw ProtocolError(where + ": '" + given + "' but model input '" + spec.name +
                        "' takes integer ids: INT64 or INT32");
  }
  if (given == "FP32") return {"FP32", 4, false};
  throw ProtocolError(where + ": '" + given + "' but model input '" + spec.name + "' is " + spec.datatype +
                      " (send FP32 values)");
}

void read_json_values(const json::Value& data, const std::vector<int64_t>& shape, size_t count, const TensorSpec& spec,
                      const WireType& type, const std::string& where, std::vector<float>& out) {
  if (!data.is_array())
    throw ProtocolError(where + " must be an array of numbers, not " + quoted_json(data));
  out.clear();
  if (!data.empty() && data[0].is_array()) {
    out.reserve(count);
    flatten_nested(data, shape, 0, spec, type, where, out);
    return;
  }
  if (data.size() != count)
    throw ProtocolError(where + " holds " + std::to_string(data.size()) + " values but the shape " +
                        shape_text(shape) + " needs " + std::to_string(count));
  out.reserve(count);
  for (size_t i = 0; i < count; ++i)
    out.push_back(element_from_json(data[i], spec, type, where + "[" + std::to_string(i) + "]"));
}

void read_binary_values(std::string_view bytes, size_t count, const TensorSpec& spec, const WireType& type,
                        const std::string& where, std::vector<float>& out) {
  out.assign(count, 0.0f);
  for (size_t i = 0; i < count; ++i) {
    const char* p = bytes.data() + i * type.bytes;
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (type.name == "FP32") {
      const float v = read_little_endian<float>(p);
      if (!std::isfinite(v)) throw ProtocolError(at + ": " + std::to_string(v) + " is not a finite FP32 value");
      out[i] = v;
    } else if (type.name == "INT32") {
      out[i] = checked_id(read_little_endian<int32_t>(p), spec, at);
    } else {
      out[i] = checked_id(read_little_endian<int64_t>(p), spec, at);
    }
  }
}

}  // namespace corun::serve::http
