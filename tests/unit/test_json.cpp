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

// Syntax errors: corun's position, then nlohmann's own words (base/json_errors.cpp); corun's own checks (duplicate
// names, a byte order mark) in its words.
TEST(JsonRead, InvalidInputsGiveThePositionAndTheParsersWords) {
  const std::string deep(300, '[');
  const Bad cases[] = {
      {"", "the text is empty", "line 1, column 1"},
      {"   \n ", "the text is empty", "line 2, column 2"},
      {"{\"a\":1,}", "while parsing object key - unexpected '}'", "line 1, column 8"},
      {"[1,]", "unexpected ']'", "line 1, column 4"},
      {"{'a':1}", "while parsing object key - invalid literal", "line 1, column 2"},
      {"{\"a\" 1}", "while parsing object separator - unexpected number literal; expected ':'", "line 1, column 6"},
      {"{\"a\":1 \"b\":2}", "while parsing object - unexpected string literal; expected '}'", ""},
      {"[1 2]", "while parsing array - unexpected number literal; expected ']'", ""},
      {"[01]", "unexpected number literal", "line 1, column 3"},
      {"[-01]", "unexpected number literal", ""},
      {"[+1]", "invalid literal; last read: '[+'", ""},
      {"[.5]", "invalid literal", ""},
      {"[1.]", "expected digit after '.'", ""},
      {"[1e]", "expected '+', '-', or digit after exponent", ""},
      {"[-]", "expected digit after '-'", ""},
      {"[NaN]", "invalid literal", ""},
      {"[Infinity]", "invalid literal", ""},
      {"[1e999]", "number overflow parsing '1e999'", ""},
      {"[tru]", "invalid literal; last read: '[tru]'", ""},
      {"[nul", "last read: '[nul'", ""},
      {"\"abc", "missing closing quote", "line 1, column 5"},
      {"\"a\tb\"", "control character U+0009 (HT) must be escaped", "line 1, column 3"},
      {"\"\\x\"", "forbidden character after backslash", ""},
      {"\"\\u12G4\"", "'\\u' must be followed by 4 hex digits", ""},
      {"\"\\ud800\"", "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF", ""},
      {"\"\\ud800\\u0041\"", "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF", ""},
      {"\"\\udc00\"", "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF", ""},
      {"\"\xFF\"", "ill-formed UTF-8", ""},
      {"\"\xC0\xAF\"", "ill-formed UTF-8", ""},      // overlong '/'
      {"\"\xED\xA0\x80\"", "ill-formed UTF-8", ""},  // an encoded surrogate
      {"\"\xE2\x82\"", "ill-formed UTF-8", ""},      // truncated sequence
      {"{\"a\":1,\"b\":2,\"a\":3}", "duplicate member name \"a\"", "line 1, column 14"},
      {"[1] [2]", "unexpected '['; expected end of input", "line 1, column 5"},
      {"// comment\n{}", "invalid literal; last read: '/'", ""},
      {"\xEF\xBB\xBF{}", "a UTF-8 byte order mark is not allowed", ""},
      {"[1,\n  2,\n  tru]", "invalid literal", "line 3, column 6"},
      {"[\x01]", "invalid literal", ""},
      {"{\"a\":}", "unexpected '}'", "line 1, column 6"},
      {"[", "unexpected end of input", ""},
      {"{\"a\":1", "while parsing object - unexpected end of input; expected '}'", ""},
      {"[0-1]", "unexpected number literal; expected ']'", "line 1, column 4"},
      {"[1 01]", "unexpected number literal", "line 1, column 4"},
      {"[1e-5 \"x\"]", "unexpected string literal", "line 1, column 9"},
      {"{\"k\\\"\": 1, \"k\\\"\": 2}", "duplicate member name \"k\"\"", "line 1, column 12"},
      {"{\"a\"", "while parsing object separator - unexpected end of input; expected ':'", ""},
      {"\"ab\\", "forbidden character after backslash", "line 1, column 5"},
      {"\"\\u12", "'\\u' must be followed by 4 hex digits", ""},
      {"[true false]", "unexpected false literal; expected ']'", "line 1, column 11"},
      {"[1, truex]", "invalid literal; last read: '1, truex'", "line 1, column 9"},
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
      Status::io_error, "<t>: invalid JSON at line 1, column 17", "unexpected ','");
  EXPECT_CORUN_ERROR(
      json::parse_streaming("{\"items\": [1], \"x\": }", "<t>", "items", [](size_t, const json::Value&) {}),
      Status::io_error, "unexpected '}'");
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
                     "'" + path("bad.json") + "': invalid JSON at line 2, column 9", "unexpected ','");
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
