// The strict JSON reader (base/json.hpp): valid documents, every class of invalid input with its
// message and position, typed access errors, and written text reading back exactly.
#include "base/json.hpp"

#include "common/error_matchers.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using corun::Status;
namespace json = corun::json;

TEST(JsonRead, AllValueTypes) {
  const json::Value v = json::parse(
      R"( {"null": null, "t": true, "f": false, "int": -12, "real": 2.5e-3, "zero": 0, "neg_zero": -0.0,
          "str": "a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20ac", "arr": [1, [2, []], {}], "obj": {"k": "v"}} )");
  ASSERT_TRUE(v.is_object());
  const json::Node doc(v, "doc");
  const auto m = doc.members();
  ASSERT_EQ(m.size(), 10u);
  // Members keep file order.
  EXPECT_EQ(m[0].first, "null");
  EXPECT_EQ(m[9].first, "obj");
  EXPECT_TRUE(doc.at("null").value().is_null());
  EXPECT_TRUE(doc.at("t").boolean());
  EXPECT_FALSE(doc.at("f").boolean());
  EXPECT_EQ(doc.at("int").number(), -12.0);
  EXPECT_EQ(doc.at("int").integer(-100, 100), -12);
  EXPECT_EQ(doc.at("real").number(), 2.5e-3);
  EXPECT_EQ(doc.at("zero").number(), 0.0);
  EXPECT_TRUE(std::signbit(doc.at("neg_zero").number()));
  EXPECT_EQ(doc.at("str").string(), "a\"b\\c/d\b\f\n\r\tA\xC3\xA9\xE2\x82\xAC");
  const auto arr = doc.at("arr").items();
  ASSERT_EQ(arr.size(), 3u);
  EXPECT_EQ(arr[1].items()[0].number(), 2.0);
  EXPECT_TRUE(arr[1].items()[1].items().empty());
  EXPECT_TRUE(arr[2].members().empty());
  EXPECT_EQ(doc.at("obj").at("k").string(), "v");
  EXPECT_FALSE(doc.find("missing").has_value());
  EXPECT_FALSE(arr[0].find("k").has_value());  // not an object: nothing to find
  EXPECT_EQ(arr[1].items()[0].name(), "doc.arr[1][0]");
}

TEST(JsonRead, ScalarsAtTopLevelAndUnicode) {
  EXPECT_EQ(json::parse("42").get<double>(), 42.0);
  EXPECT_EQ(json::parse("\"x\"").get<std::string>(), "x");
  EXPECT_TRUE(json::parse(" \t\r\nnull \n").is_null());
  // A surrogate pair becomes one 4-byte UTF-8 sequence; raw UTF-8 passes through.
  EXPECT_EQ(json::Node(json::parse(R"("\ud83d\ude00")"), "x").string(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(json::Node(json::parse("\"\xF0\x9F\x98\x80 \xC3\xA9\""), "x").string(), "\xF0\x9F\x98\x80 \xC3\xA9");
}

TEST(JsonRead, Numbers) {
  EXPECT_EQ(json::Node(json::parse("1E2"), "x").number(), 100.0);
  EXPECT_EQ(json::Node(json::parse("-2.5e+3"), "x").number(), -2500.0);
  EXPECT_EQ(json::Node(json::parse("1.7976931348623157e308"), "x").number(), std::numeric_limits<double>::max());
  EXPECT_EQ(json::Node(json::parse("1e-400"), "x").number(), 0.0);  // underflow is harmless
  EXPECT_EQ(json::Node(json::parse("0.1"), "x").number(), 0.1);
}

struct Bad {
  const char* text;
  const char* message;
  const char* position;  // "line L, column C", or "" to skip
};

TEST(JsonRead, InvalidInputsAreNamedPrecisely) {
  const std::string deep(300, '[');
  const Bad cases[] = {
      {"", "the text is empty", "line 1, column 1"},
      {"   \n ", "the text is empty", "line 2, column 2"},
      {"{\"a\":1,}", "trailing comma before '}'", "line 1, column 8"},
      {"[1,]", "trailing comma before ']'", "line 1, column 4"},
      {"{'a':1}", "expected a member name in double quotes, found '''", "line 1, column 2"},
      {"{\"a\" 1}", "expected ':' after member name \"a\", found '1'", "line 1, column 6"},
      {"{\"a\":1 \"b\":2}", "expected ',' or '}' in an object, found '\"'", ""},
      {"[1 2]", "expected ',' or ']' in an array, found '2'", ""},
      {"[01]", "numbers must not have leading zeros", "line 1, column 2"},
      {"[-01]", "numbers must not have leading zeros", ""},
      {"[+1]", "expected a value (object, array, string, number, true, false or null), found '+'", ""},
      {"[.5]", "expected a value", ""},
      {"[1.]", "expected a digit after the decimal point, found ']'", ""},
      {"[1e]", "expected a digit in the exponent", ""},
      {"[-]", "expected a digit after '-'", ""},
      {"[NaN]", "expected a value", ""},
      {"[Infinity]", "expected a value", ""},
      {"[1e999]", "number 1e999 is out of range", ""},
      {"[tru]", "expected 'true', found 't'", ""},
      {"[nul", "expected 'null'", ""},
      {"\"abc", "unterminated string", "line 1, column 1"},
      {"\"a\tb\"", "control character (byte 0x09) in a string must be escaped", "line 1, column 3"},
      {"\"\\x\"", "invalid escape '\\x'", ""},
      {"\"\\u12G4\"", "expected 4 hex digits after \\u, found 'G'", ""},
      {"\"\\ud800\"", "high surrogate \\uD800 is not followed by a low surrogate", ""},
      {"\"\\ud800\\u0041\"", "high surrogate \\uD800 is not followed by a low surrogate", ""},
      {"\"\\udc00\"", "lone low surrogate \\uDC00", ""},
      {"\"\xFF\"", "invalid UTF-8 in a string", ""},
      {"\"\xC0\xAF\"", "invalid UTF-8 in a string", ""},      // overlong '/'
      {"\"\xED\xA0\x80\"", "invalid UTF-8 in a string", ""},  // an encoded surrogate
      {"\"\xE2\x82\"", "invalid UTF-8 in a string", ""},      // truncated sequence
      {"{\"a\":1,\"b\":2,\"a\":3}", "duplicate member name \"a\"", "line 1, column 14"},
      {"[1] [2]", "unexpected text after the JSON value", "line 1, column 5"},
      {"// comment\n{}", "expected a value", ""},
      {"\xEF\xBB\xBF{}", "a UTF-8 byte order mark is not allowed", ""},
      {"[1,\n  2,\n  tru]", "expected 'true'", "line 3, column 3"},
      {"[\x01]", "found byte 0x01", ""},
      {"{\"a\":}", "expected a value", "line 1, column 6"},
      {"[", "expected a value, found the end of the text", ""},
      {"{\"a\":1", "expected ',' or '}' in an object, found the end of the text", ""},
      // The start of the offending token, however the error was found.
      {"[0-1]", "expected ',' or ']' in an array, found '-'", "line 1, column 3"},
      {"[1 01]", "expected ',' or ']' in an array, found '0'", "line 1, column 4"},
      {"[1e-5 \"x\"]", "expected ',' or ']' in an array, found '\"'", "line 1, column 7"},
      {"{\"k\\\"\": 1, \"k\\\"\": 2}", "duplicate member name \"k\"\"", "line 1, column 12"},
      {"{\"a\"", "expected ':' after member name \"a\", found the end of the text", ""},
      {"\"ab\\", "unterminated string", "line 1, column 1"},
      {"\"\\u12", "unterminated \\u escape", ""},
      {"[true false]", "expected ',' or ']' in an array, found 'f'", "line 1, column 7"},
      {"[1, truex]", "expected ',' or ']' in an array, found 'x'", "line 1, column 9"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string msg = corun::testing::error_message([&] { json::parse(c.text, "'in.json'"); }, Status::io_error);
    corun::testing::expect_contains(msg, {"'in.json': invalid JSON at ", c.message});
    if (*c.position) corun::testing::expect_contains(msg, {c.position});
  }
  // A duplicate in a large object (found through a hash set rather than a scan), at its position.
  std::string big = "{";
  for (int i = 0; i < 40; ++i) big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",\n";
  EXPECT_CORUN_ERROR(json::parse(big + "\"k7\": 0}"), Status::io_error, "line 41, column 1",
                     "duplicate member name \"k7\"");
  EXPECT_NO_THROW(json::parse(big + "\"k40\": 0}"));
  EXPECT_CORUN_ERROR(json::parse(deep), Status::io_error, "nesting deeper than 256 levels");
  // 256 levels are fine.
  EXPECT_NO_THROW(json::parse(std::string(256, '[') + std::string(256, ']')));
}

TEST(JsonRead, TypedAccessErrorsNameTheValue) {
  const json::Value v = json::parse(R"({"s": "x", "n": 1.5, "a": [], "o": {}, "z": null})");
  const json::Node doc(v, "doc");
  EXPECT_CORUN_ERROR(doc.at("s").number(), Status::io_error, "doc.s must be a number, not a string");
  EXPECT_CORUN_ERROR(doc.at("n").string(), Status::io_error, "doc.n must be a string, not a number");
  EXPECT_CORUN_ERROR(doc.at("a").members(), Status::io_error, "doc.a must be an object, not an array");
  EXPECT_CORUN_ERROR(doc.at("o").items(), Status::io_error, "doc.o must be an array, not an object");
  EXPECT_CORUN_ERROR(doc.at("z").boolean(), Status::io_error, "doc.z must be a boolean, not null");
  EXPECT_CORUN_ERROR(doc.at("n").integer(0, 10), Status::io_error, "doc.n must be an integer in [0, 10], not 1.5");
  EXPECT_CORUN_ERROR(json::Node(json::parse("11"), "w").integer(0, 10), Status::io_error,
                     "w must be an integer in [0, 10], not 11");
  EXPECT_CORUN_ERROR(doc.at("missing"), Status::io_error, "doc has no 'missing'");
  EXPECT_CORUN_ERROR(doc.at("a").at("k"), Status::io_error, "doc.a must be an object, not an array");
  // Integers read as integers, whichever way the file spells them; out of range is refused either way.
  EXPECT_EQ(json::Node(json::parse("2.0"), "w").integer(0, 10), 2);
  EXPECT_EQ(json::Node(json::parse("-1"), "w").integer(-1, 10), -1);
  EXPECT_CORUN_ERROR(json::Node(json::parse("18446744073709551615"), "w").integer(0, 10), Status::io_error,
                     "w must be an integer in [0, 10]");
}

// The big array of a document is handed over element by element and not kept; the rest is parsed as usual.
TEST(JsonRead, StreamingOneArrayMember) {
  const std::string text = R"({"head": 1, "items": [{"a": 1}, 2, [3, {"items": [4]}]], "tail": {"items": [5]}})";
  std::vector<std::string> seen;
  const json::Value doc = json::parse_streaming(text, "<t>", "items", [&](size_t i, const json::Value& v) {
    seen.push_back(std::to_string(i) + ":" + v.type_name());
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"0:object", "1:number", "2:array"}));
  EXPECT_EQ(doc.at("head").get<double>(), 1.0);
  EXPECT_TRUE(doc.at("items").is_array() && doc.at("items").empty());
  // Only the top-level member is streamed: a nested "items" is an ordinary array.
  EXPECT_EQ(doc.at("tail").at("items").size(), 1u);

  // Syntax errors inside and after the array are still found, with their position.
  EXPECT_CORUN_ERROR(
      json::parse_streaming("{\"items\": [1, 2,, 3]}", "<t>", "items", [](size_t, const json::Value&) {}),
      Status::io_error, "<t>: invalid JSON at line 1, column 17", "expected a value");
  EXPECT_CORUN_ERROR(
      json::parse_streaming("{\"items\": [1], \"x\": }", "<t>", "items", [](size_t, const json::Value&) {}),
      Status::io_error, "expected a value");
  // The callback may stop the parse by throwing.
  int calls = 0;
  EXPECT_THROW(json::parse_streaming(R"({"items": [1, 2, 3]})", "<t>", "items",
                                     [&](size_t i, const json::Value&) {
                                       ++calls;
                                       if (i == 1) throw std::runtime_error("stop");
                                     }),
               std::runtime_error);
  EXPECT_EQ(calls, 2);
  // A member of that name that is not an array, or a document that is not an object: nothing is streamed.
  calls = 0;
  const json::Value plain =
      json::parse_streaming(R"({"items": {"k": [1]}})", "<t>", "items", [&](size_t, const json::Value&) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(plain.at("items").is_object());
  EXPECT_EQ(json::parse_streaming("[1, 2]", "<t>", "items", [&](size_t, const json::Value&) { ++calls; }).size(), 2u);
  EXPECT_EQ(calls, 0);
}

class JsonFile : public corun::testing::TempDirTest {
 protected:
  JsonFile() : TempDirTest("json") {}
};

TEST_F(JsonFile, ParseFileNamesTheFile) {
  EXPECT_CORUN_ERROR(json::parse_file(path("nope.json")), Status::io_error, "cannot read '" + path("nope.json") + "'");
  { std::ofstream(path("bad.json")) << "{\n\"a\": [1,,2]}"; }
  EXPECT_CORUN_ERROR(json::parse_file(path("bad.json")), Status::io_error,
                     "'" + path("bad.json") + "': invalid JSON at line 2, column 9", "expected a value");
  { std::ofstream(path("ok.json")) << R"({"a": [1, 2]})"; }
  EXPECT_EQ(json::parse_file(path("ok.json")).at("a").size(), 2u);
}

TEST(JsonWrite, StringsReadBackExactly) {
  const std::string samples[] = {"",
                                 "plain",
                                 "q\"uote\\back/slash",
                                 std::string("ctl\x01\x1f\n\r\t\b\f", 11),
                                 "utf8 \xC3\xA9 \xF0\x9F\x98\x80",
                                 "del \x7f"};
  for (const std::string& s : samples) {
    const std::string out = json::dump(json::Value(s));
    EXPECT_EQ(json::Node(json::parse(out), "x").string(), s) << out;
  }
  // Invalid UTF-8 is replaced, so the output is still strict JSON.
  const std::string out = json::dump(json::Value("bad \xFF byte \xC0\xAF"));
  EXPECT_EQ(json::Node(json::parse(out), "x").string(), "bad \xEF\xBF\xBD byte \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(JsonWrite, NumbersReadBackExactly) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e7, 1e7);
  for (int i = 0; i < 2000; ++i) {
    const double v = i % 3 ? u(rng) : std::ldexp(u(rng), static_cast<int>(rng() % 200) - 100);
    const std::string out = json::dump(json::Value(v));
    EXPECT_EQ(json::Node(json::parse(out), "x").number(), v) << out;
  }
  for (double v : {0.0, 1.0, 0.1, 1234.5, 1e300, 5e-324, -3.0}) {
    const std::string out = json::dump(json::Value(v));
    EXPECT_EQ(json::Node(json::parse(out), "x").number(), v) << out;
  }
  // nlohmann keeps a double a double ("12.0"); json::number writes the shortest form ("12"), as the trace
  // format pins it, and reads back to the same double.
  EXPECT_EQ(json::dump(json::Value(12.0)), "12.0");
  EXPECT_EQ(json::dump(json::number(12.0)), "12");  // shortest form
  for (double v : {0.0, -0.0, 12.0, -3.0, 0.1, 40.25, 1e300, 9007199254740993.0, 5e-324}) {
    const std::string out = json::dump(json::number(v));
    EXPECT_EQ(json::Node(json::parse(out), "x").number(), v) << out;
    EXPECT_EQ(std::signbit(json::Node(json::parse(out), "x").number()), std::signbit(v)) << out;
  }
  for (double v : {NAN, INFINITY, -INFINITY}) EXPECT_EQ(json::dump(json::number(v)), "null");
  EXPECT_EQ(json::dump(json::Value(0.1)), "0.1");
  EXPECT_EQ(json::dump(json::Value(12)), "12");
  for (double v : {NAN, INFINITY, -INFINITY}) EXPECT_EQ(json::dump(json::Value(v)), "null");
  // Members in the order they were added, on one line or indented.
  const json::Value doc = {{"z", 1}, {"a", {1.5, "x"}}};
  EXPECT_EQ(json::dump(doc), R"({"z":1,"a":[1.5,"x"]})");
  EXPECT_EQ(json::dump(doc, 1), "{\n \"z\": 1,\n \"a\": [\n  1.5,\n  \"x\"\n ]\n}");
}

}  // namespace
