// base/json.hpp — a compact, strict JSON reader (RFC 8259) for the files corun writes itself
// (execution traces, result files), and the two helpers that write JSON text it reads back exactly.
// No StarPU here.
//
// Usage:
//   json::Value doc = json::parse_file("run.trace.json");          // throws corun::Error(io_error)
//   const json::Value& meta = doc.at("otherData", "run.trace.json");
//   double ms = meta.at("makespan_us", "otherData").number("otherData.makespan_us") / 1000;
//
// Strict means: exactly one value and only whitespace around it; no comments, trailing commas, single
// quotes, NaN/Infinity, leading zeros, '+' signs, unescaped control characters, invalid UTF-8, lone
// surrogates or duplicate object keys; nesting deeper than 256 levels is refused (no stack overflow on
// hostile input). A syntax error names the source, the line and column, and what was expected there.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace corun::json {

enum class Type { null, boolean, number, string, array, object };

/// "null", "boolean", "number", "string", "array", "object".
const char* type_name(Type t);

/// One parsed JSON value. Objects keep their members in file order.
class Value {
 public:
  Value() = default;

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::null; }
  bool is_number() const { return type_ == Type::number; }
  bool is_string() const { return type_ == Type::string; }
  bool is_array() const { return type_ == Type::array; }
  bool is_object() const { return type_ == Type::object; }

  // Typed access. `what` names the value in the error message ("otherData.workers", "traceEvents[3].ts");
  // a value of another type throws corun::Error(io_error) "<what> must be a <type>, not a <type>".
  bool boolean(const std::string& what) const;
  double number(const std::string& what) const;
  /// A number that is an integer within [lo, hi].
  long integer(const std::string& what, long lo, long hi) const;
  const std::string& string(const std::string& what) const;
  const std::vector<Value>& array(const std::string& what) const;
  const std::vector<std::pair<std::string, Value>>& object(const std::string& what) const;

  /// The member `key` of an object, or nullptr when absent (or when this is not an object).
  const Value* find(std::string_view key) const;
  /// The member `key`; throws corun::Error(io_error) "<what> has no '<key>'" when absent or not an object.
  const Value& at(std::string_view key, const std::string& what) const;

 private:
  friend class Parser;
  Type type_ = Type::null;
  bool bool_ = false;
  double number_ = 0.0;
  std::string string_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> members_;
};

/// Parses `text`; `source` names it in error messages (a file name, "<string>").
/// Throws corun::Error(io_error): "corun: <source>: invalid JSON at line L, column C: <what was wrong>".
Value parse(std::string_view text, const std::string& source = "<string>");

/// Reads and parses the file at `path`; errors name the file (and say so when it cannot be read).
Value parse_file(const std::string& path);

/// Called with each element (and its index) of a streamed array; may throw to stop the parse.
using ItemCallback = std::function<void(size_t index, const Value& item)>;

/// Like parse(), but the elements of the top-level object's array member `key` are handed to `on_item` one
/// at a time, as soon as each is parsed, and not kept: in the result that member is an empty array. The
/// rest of the document, including its syntax checks, is unchanged. For files whose bulk is one long array
/// (an execution trace's "traceEvents"): memory stays at the text plus one element.
Value parse_streaming(std::string_view text, const std::string& source, std::string_view key,
                      const ItemCallback& on_item);
Value parse_file_streaming(const std::string& path, std::string_view key, const ItemCallback& on_item);

// ---------------------------------------------------------------------------------------------- writing

/// Appends `s` as a JSON string literal. Control characters are escaped; bytes that are not valid UTF-8
/// become U+FFFD, so the output always parses (strictly) again.
void append_string(std::string& out, std::string_view s);

/// Appends `v` in the shortest form that reads back to exactly the same double; NaN and infinities
/// (which JSON cannot represent) become null.
void append_number(std::string& out, double v);

}  // namespace corun::json
