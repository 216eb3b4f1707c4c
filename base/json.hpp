// base/json.hpp — JSON for the files corun reads and writes (traces, result files, checkpoint manifests,
// profiles, schedules, serving plans), on nlohmann::json (Debian's nlohmann-json3-dev). No StarPU here.
//
// This is the only header that includes <nlohmann/json.hpp>: documents are built with nlohmann's own API
// through the alias json::Value, but every file is read through parse() below, which is stricter than
// nlohmann's parser, and through Node, whose errors name the value that was wrong.
//
// Usage:
//   const json::Value doc = json::parse_file("run.trace.json");    // throws corun::Error(io_error)
//   const json::Node other(doc, "'run.trace.json': otherData");
//   double ms = other.at("makespan_us").number() / 1000;            // "...otherData.makespan_us must be a number"
//
//   json::Value out = {{"format", "corun-profile"}, {"version", 1}};
//   write_file_atomically(path, json::dump(out, 2));
//
// Strict means: exactly one value and only whitespace around it; no comments, trailing commas, single
// quotes, NaN/Infinity, leading zeros, '+' signs, unescaped control characters, invalid UTF-8, lone
// surrogates, byte order marks or duplicate object keys; nesting deeper than 256 levels is refused. A
// syntax error names the source, the line and column, and what was expected there.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace corun::json {

/// A JSON document. Objects keep their members in insertion order: a file we write lists its fields in
/// the order the code builds them, and a document read back lists its members as the file did.
using Value = nlohmann::ordered_json;

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

/// The text of `v`: on one line (indent < 0) or indented. Numbers in the shortest form that reads back to
/// the same double, NaN and infinities (which JSON cannot represent) as null, bytes that are not valid
/// UTF-8 as U+FFFD: the output always parses (strictly) again.
std::string dump(const Value& v, int indent = -1);

/// `v` as the shortest JSON number that reads back to it: an integral value as an integer ("12", where
/// nlohmann writes a double as "12.0"), NaN and infinities as null. For files whose text is pinned (traces).
Value number(double v);

/// A parsed value with the name error messages give it ("'run.json': otherData"). Members are named
/// "<name>.<key>", elements "<name>[<i>]"; a name ending in a space is a prefix ("run.json: " names the
/// member "run.json: format"). Typed reads throw corun::Error(io_error)
/// "<name> must be a <type>, not a <type>". A Node refers into its document, which must outlive it.
class Node {
 public:
  Node(const Value& v, std::string name) : v_(&v), name_(std::move(name)) {}

  const Value& value() const { return *v_; }
  const std::string& name() const { return name_; }

  bool boolean() const;
  double number() const;
  /// A number that is an integer within [lo, hi].
  long integer(long lo, long hi) const;
  const std::string& string() const;
  /// The elements of an array.
  std::vector<Node> items() const;
  /// The members of an object, in file order.
  std::vector<std::pair<std::string, Node>> members() const;

  /// The member `key`; "<name> has no '<key>'" when absent.
  Node at(std::string_view key) const;
  /// The member `key`, or nothing when absent or when this is not an object.
  std::optional<Node> find(std::string_view key) const;

 private:
  std::string member_name(std::string_view key) const;

  const Value* v_;
  std::string name_;
};

}  // namespace corun::json
