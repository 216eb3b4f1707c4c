// nlohmann's parser reports an error as a message ("syntax error while parsing <context> - unexpected
// <token>; expected <tokens>" or a lexer complaint) and the number of bytes it has read, which is past the
// offending token. corun's messages say in words what was expected at the start of that token, and point
// there; the token's start is found by scanning back over the text. The messages are those of nlohmann
// 3.11 (cmake/deps.cmake asks for it); tests/unit/test_json.cpp checks every kind.
#include "base/json_errors.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace corun::json {

namespace {

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_number_char(char c) {
  return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}
bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::string hex(unsigned v, int digits) {
  char b[16];
  std::snprintf(b, sizeof b, "%0*X", digits, v);
  return b;
}

// What is at `p`, for "expected X, found Y" messages.
std::string found(std::string_view text, size_t p) {
  if (p >= text.size()) return "the end of the text";
  const unsigned char c = static_cast<unsigned char>(text[p]);
  if (c < 0x20 || c >= 0x7F) return "byte 0x" + hex(c, 2);
  return std::string("'") + static_cast<char>(c) + "'";
}

// The start of the number token whose last character is at `last`. A sign is part of it only at its start
// or after the exponent's 'e' ("0-1" is the numbers 0 and -1).
size_t number_start(std::string_view text, size_t last) {
  size_t i = std::min(last, text.size() - 1);
  while (i > 0 && is_number_char(text[i - 1])) {
    --i;
    if ((text[i] == '-' || text[i] == '+') && !(i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E'))) break;
  }
  return i;
}

// Where the literal that failed at `at` begins: the longest run before `at` that starts true, false or
// null ("[tru]" fails at ']'), or `at` itself when the offending character starts no literal.
size_t literal_start(std::string_view text, size_t at) {
  for (size_t len = std::min<size_t>(4, at); len >= 1; --len) {
    const std::string_view run = text.substr(at - len, len);
    for (std::string_view word : {"true", "false", "null"})
      if (len < word.size() && word.substr(0, len) == run) return at - len;
  }
  return at;
}

// The lead byte of the UTF-8 sequence that failed at `at` (nlohmann stops at the byte that broke it).
size_t utf8_start(std::string_view text, size_t at) {
  size_t i = std::min(at, text.size());
  int continuation = 0;
  while (i > 0 && continuation < 3 && (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++continuation;
  }
  if (i == 0) return at;
  const unsigned char lead = static_cast<unsigned char>(text[i - 1]);
  const size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  return length > at - (i - 1) ? i - 1 : at;  // an incomplete sequence before `at` is the culprit
}

// The nearest "\uXXXX" escape before `at` whose value lies in [lo, hi]: the offending surrogate.
size_t surrogate_escape(std::string_view text, size_t at, unsigned lo, unsigned hi, unsigned* value) {
  for (size_t i = std::min(at, text.size()); i-- > 0;) {
    if (text[i] != '\\' || i + 6 > text.size() || text[i + 1] != 'u') continue;
    const unsigned v = static_cast<unsigned>(std::stoul(std::string(text.substr(i + 2, 4)), nullptr, 16));
    if (v >= lo && v <= hi) {
      *value = v;
      return i;
    }
  }
  *value = lo;
  return at;
}

// The last non-whitespace character before `p`, or 0.
char previous(std::string_view text, size_t p) {
  while (p > 0) {
    const char c = text[--p];
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r') return c;
  }
  return 0;
}

// The token nlohmann names in "unexpected <token>" ends at `at` (or is the end of the text): its start.
size_t token_start(std::string_view text, size_t at, const std::string& token) {
  if (at >= text.size() || token == "end of input") return text.size();
  if (token == "string literal") return string_start(text, at);
  if (token == "number literal") return number_start(text, at);
  if (token == "true literal" || token == "false literal" || token == "null literal") {
    size_t i = at;
    while (i > 0 && is_letter(text[i - 1])) --i;
    return i;
  }
  return at;
}

// What the parser expected in `context` when it found the token starting at `tok`.
std::string expected(std::string_view text, size_t tok, const std::string& context, bool end_expected,
                     const std::string& last_key) {
  if (context == "value") {
    if (end_expected) return "unexpected text after the JSON value";
    if (tok >= text.size())
      return previous(text, tok) == 0 ? "the text is empty, expected a JSON value"
                                      : "expected a value, found the end of the text";
    if (text[tok] == ']' && previous(text, tok) == ',') return "trailing comma before ']'";
    return "expected a value (object, array, string, number, true, false or null), found " + found(text, tok);
  }
  if (context == "object key") {
    if (tok < text.size() && text[tok] == '}' && previous(text, tok) == ',') return "trailing comma before '}'";
    return "expected a member name in double quotes, found " + found(text, tok);
  }
  if (context == "object separator")
    return "expected ':' after member name \"" + last_key + "\", found " + found(text, tok);
  if (context == "object") return "expected ',' or '}' in an object, found " + found(text, tok);
  if (context == "array") return "expected ',' or ']' in an array, found " + found(text, tok);
  return "unexpected " + found(text, tok) + " while parsing " + context;
}

}  // namespace

void fail_at(std::string_view text, const std::string& source, size_t at, const std::string& why) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++col;  // count characters, not UTF-8 continuation bytes
    }
  }
  std::ostringstream os;
  os << source << ": invalid JSON at line " << line << ", column " << col << ": " << why;
  detail::fail(Status::io_error, os.str());
}

size_t string_start(std::string_view text, size_t end) {
  for (size_t i = std::min(end, text.size()); i-- > 0;) {
    if (text[i] != '"') continue;
    size_t backslashes = 0;
    while (backslashes < i && text[i - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return i;
  }
  return 0;
}

void explain_parse_error(std::string_view text, const std::string& source, size_t position, int id,
                         const std::string& message, const std::string& last_key) {
  // `position` counts the bytes read, the offending one included (and the end of the text as one more).
  const size_t at = std::min(position > 0 ? position - 1 : 0, text.size());
  if (id == 406) {  // out_of_range.406: a number beyond the range of a double
    const size_t start = number_start(text, at);
    fail_at(text, source, start, "number " + std::string(text.substr(start, at + 1 - start)) + " is out of range");
  }
  const size_t ctx = message.find("while parsing ");
  const size_t dash = message.find(" - ", ctx);
  if (ctx == std::string::npos || dash == std::string::npos) fail_at(text, source, at, message);
  const std::string context = message.substr(ctx + 14, dash - ctx - 14);
  const std::string what = message.substr(dash + 3);
  const bool end_expected = what.find("; expected end of input") != std::string::npos;

  // Errors inside one token (the lexer's).
  if (starts_with(what, "invalid string: missing closing quote"))
    fail_at(text, source, string_start(text, at), "unterminated string");
  if (starts_with(what, "invalid string: control character"))
    fail_at(
        text, source, at,
        "control character (byte 0x" + hex(static_cast<unsigned char>(text[at]), 2) + ") in a string must be escaped");
  if (starts_with(what, "invalid string: forbidden character after backslash")) {
    if (at >= text.size()) fail_at(text, source, string_start(text, at), "unterminated string");
    fail_at(text, source, at,
            "invalid escape '\\" + std::string(1, text[at]) + "' (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
  }
  if (starts_with(what, "invalid string: '\\u' must be followed by 4 hex digits"))
    fail_at(
        text, source, at,
        at >= text.size() ? "unterminated \\u escape" : "expected 4 hex digits after \\u, found " + found(text, at));
  if (starts_with(what, "invalid string: surrogate U+D800..U+DBFF")) {
    unsigned v = 0;
    const size_t esc = surrogate_escape(text, at, 0xD800, 0xDBFF, &v);
    fail_at(text, source, esc, "high surrogate \\u" + hex(v, 4) + " is not followed by a low surrogate");
  }
  if (starts_with(what, "invalid string: surrogate U+DC00..U+DFFF")) {
    unsigned v = 0;
    const size_t esc = surrogate_escape(text, at, 0xDC00, 0xDFFF, &v);
    fail_at(text, source, esc, "lone low surrogate \\u" + hex(v, 4));
  }
  if (starts_with(what, "invalid string: ill-formed UTF-8"))
    fail_at(text, source, utf8_start(text, at), "invalid UTF-8 in a string");
  if (starts_with(what, "invalid number; expected digit after '-'"))
    fail_at(text, source, at, "expected a digit after '-', found " + found(text, at));
  if (starts_with(what, "invalid number; expected digit after '.'"))
    fail_at(text, source, at, "expected a digit after the decimal point, found " + found(text, at));
  if (starts_with(what, "invalid number;"))  // after the exponent's 'e' or its sign
    fail_at(text, source, at, "expected a digit in the exponent, found " + found(text, at));
  if (starts_with(what, "invalid literal")) {
    const size_t tok = literal_start(text, at);
    if (context == "value" && !end_expected && tok < at) {
      const char* word = text[tok] == 't' ? "true" : text[tok] == 'f' ? "false" : "null";
      fail_at(text, source, tok, std::string("expected '") + word + "', found " + found(text, tok));
    }
    fail_at(text, source, tok, expected(text, tok, context, end_expected, last_key));
  }

  // A whole token where the grammar allows none of its kind.
  std::string token;
  if (starts_with(what, "unexpected ")) token = what.substr(11, what.find(';') - 11);
  const size_t tok = token_start(text, at, token);
  // nlohmann reads "01" as the numbers 0 and 1: a number that ends past a leading 0 of the same run of
  // digits had a leading zero.
  if (token == "number literal") {
    const size_t digit = text[tok] == '-' ? tok + 1 : tok;
    if (digit < at && text[digit] == '0' && is_digit(text[digit + 1]))
      fail_at(text, source, tok, "numbers must not have leading zeros");
  }
  fail_at(text, source, tok, expected(text, tok, context, end_expected, last_key));
}

}  // namespace corun::json
