// The strict JSON reader (base/json.hpp): valid documents, every class of invalid input with its
// message and position, typed access errors, and the writer helpers reading back exactly.
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
  const auto& m = v.object("doc");
  ASSERT_EQ(m.size(), 10u);
  // Members keep file order.
  EXPECT_EQ(m[0].first, "null");
  EXPECT_EQ(m[9].first, "obj");
  EXPECT_TRUE(v.at("null", "doc").is_null());
  EXPECT_TRUE(v.at("t", "doc").boolean("t"));
  EXPECT_FALSE(v.at("f", "doc").boolean("f"));
  EXPECT_EQ(v.at("int", "doc").number("int"), -12.0);
  EXPECT_EQ(v.at("int", "doc").integer("int", -100, 100), -12);
  EXPECT_EQ(v.at("real", "doc").number("real"), 2.5e-3);
  EXPECT_EQ(v.at("zero", "doc").number("zero"), 0.0);
  EXPECT_TRUE(std::signbit(v.at("neg_zero", "doc").number("neg_zero")));
  EXPECT_EQ(v.at("str", "doc").string("str"), "a\"b\\c/d\b\f\n\r\tA\xC3\xA9\xE2\x82\xAC");
  const auto& arr = v.at("arr", "doc").array("arr");
  ASSERT_EQ(arr.size(), 3u);
  EXPECT_EQ(arr[1].array("arr[1]")[0].number("x"), 2.0);
  EXPECT_TRUE(arr[1].array("arr[1]")[1].array("x").empty());
  EXPECT_TRUE(arr[2].object("x").empty());
  EXPECT_EQ(v.at("obj", "doc").at("k", "obj").string("k"), "v");
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(arr[0].find("k"), nullptr);  // not an object: nothing to find
}

TEST(JsonRead, ScalarsAtTopLevelAndUnicode) {
  EXPECT_EQ(json::parse("42").number("x"), 42.0);
  EXPECT_EQ(json::parse("\"x\"").string("x"), "x");
  EXPECT_TRUE(json::parse(" \t\r\nnull \n").is_null());
  // A surrogate pair becomes one 4-byte UTF-8 sequence; raw UTF-8 passes through.
  EXPECT_EQ(json::parse(R"("\ud83d\ude00")").string("x"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(json::parse("\"\xF0\x9F\x98\x80 \xC3\xA9\"").string("x"), "\xF0\x9F\x98\x80 \xC3\xA9");
}

TEST(JsonRead, Numbers) {
  EXPECT_EQ(json::parse("1E2").number("x"), 100.0);
  EXPECT_EQ(json::parse("-2.5e+3").number("x"), -2500.0);
  EXPECT_EQ(json::parse("1.7976931348623157e308").number("x"), std::numeric_limits<double>::max());
  EXPECT_EQ(json::parse("1e-400").number("x"), 0.0);  // underflow is harmless
  EXPECT_EQ(json::parse("0.1").number("x"), 0.1);
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
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string msg = corun::testing::error_message([&] { json::parse(c.text, "'in.json'"); }, Status::io_error);
    corun::testing::expect_contains(msg, {"'in.json': invalid JSON at ", c.message});
    if (*c.position) corun::testing::expect_contains(msg, {c.position});
  }
  EXPECT_CORUN_ERROR(json::parse(deep), Status::io_error, "nesting deeper than 256 levels");
  // 256 levels are fine.
  EXPECT_NO_THROW(json::parse(std::string(256, '[') + std::string(256, ']')));
}

TEST(JsonRead, TypedAccessErrorsNameTheValue) {
  const json::Value v = json::parse(R"({"s": "x", "n": 1.5, "a": [], "o": {}, "z": null})");
  EXPECT_CORUN_ERROR(v.at("s", "doc").number("doc.s"), Status::io_error, "doc.s must be a number, not a string");
  EXPECT_CORUN_ERROR(v.at("n", "doc").string("doc.n"), Status::io_error, "doc.n must be a string, not a number");
  EXPECT_CORUN_ERROR(v.at("a", "doc").object("doc.a"), Status::io_error, "doc.a must be an object, not an array");
  EXPECT_CORUN_ERROR(v.at("o", "doc").array("doc.o"), Status::io_error, "doc.o must be an array, not an object");
  EXPECT_CORUN_ERROR(v.at("z", "doc").boolean("doc.z"), Status::io_error, "doc.z must be a boolean, not null");
  EXPECT_CORUN_ERROR(v.at("n", "doc").integer("doc.n", 0, 10), Status::io_error,
                     "doc.n must be an integer in [0, 10], not 1.5");
  EXPECT_CORUN_ERROR(json::parse("11").integer("w", 0, 10), Status::io_error,
                     "w must be an integer in [0, 10], not 11");
  EXPECT_CORUN_ERROR(v.at("missing", "doc"), Status::io_error, "doc has no 'missing'");
  EXPECT_CORUN_ERROR(v.at("a", "doc").at("k", "doc.a"), Status::io_error, "doc.a must be an object, not an array");
}

// The big array of a document is handed over element by element and not kept; the rest is parsed as usual.
TEST(JsonRead, StreamingOneArrayMember) {
  const std::string text = R"({"head": 1, "items": [{"a": 1}, 2, [3, {"items": [4]}]], "tail": {"items": [5]}})";
  std::vector<std::string> seen;
  const json::Value doc = json::parse_streaming(text, "<t>", "items", [&](size_t i, const json::Value& v) {
    seen.push_back(std::to_string(i) + ":" + json::type_name(v.type()));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"0:object", "1:number", "2:array"}));
  EXPECT_EQ(doc.at("head", "doc").number("head"), 1.0);
  EXPECT_TRUE(doc.at("items", "doc").array("items").empty());
  // Only the top-level member is streamed: a nested "items" is an ordinary array.
  EXPECT_EQ(doc.at("tail", "doc").at("items", "tail").array("items").size(), 1u);

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
  EXPECT_TRUE(plain.at("items", "doc").is_object());
  EXPECT_EQ(
      json::parse_streaming("[1, 2]", "<t>", "items", [&](size_t, const json::Value&) { ++calls; }).array("doc").size(),
      2u);
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
  EXPECT_EQ(json::parse_file(path("ok.json")).at("a", "x").array("a").size(), 2u);
}

TEST(JsonWrite, StringsReadBackExactly) {
  const std::string samples[] = {"",
                                 "plain",
                                 "q\"uote\\back/slash",
                                 std::string("ctl\x01\x1f\n\r\t\b\f", 11),
                                 "utf8 \xC3\xA9 \xF0\x9F\x98\x80",
                                 "del \x7f"};
  for (const std::string& s : samples) {
    std::string out;
    json::append_string(out, s);
    EXPECT_EQ(json::parse(out).string("x"), s) << out;
  }
  // Invalid UTF-8 is replaced, so the output is still strict JSON.
  std::string out;
  json::append_string(out, "bad \xFF byte \xC0\xAF");
  EXPECT_EQ(json::parse(out).string("x"), "bad \xEF\xBF\xBD byte \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(JsonWrite, NumbersReadBackExactly) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e7, 1e7);
  for (int i = 0; i < 2000; ++i) {
    const double v = i % 3 ? u(rng) : std::ldexp(u(rng), static_cast<int>(rng() % 200) - 100);
    std::string out;
    json::append_number(out, v);
    EXPECT_EQ(json::parse(out).number("x"), v) << out;
  }
  for (double v : {0.0, 1.0, 0.1, 1234.5, 1e300, 5e-324, -3.0}) {
    std::string out;
    json::append_number(out, v);
    EXPECT_EQ(json::parse(out).number("x"), v) << out;
  }
  std::string out;
  json::append_number(out, 12.0);
  EXPECT_EQ(out, "12");  // shortest form
  for (double v : {NAN, INFINITY, -INFINITY}) {
    std::string o;
    json::append_number(o, v);
    EXPECT_EQ(o, "null");
  }
}

}  // namespace
