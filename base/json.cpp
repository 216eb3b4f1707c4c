// Strict recursive-descent JSON parser. One pass over the text; errors carry line and column, computed
// only when an error is reported.
#include "base/json.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace corun::json {

const char* type_name(Type t) {
  switch (t) {
    case Type::null:
      return "null";
    case Type::boolean:
      return "boolean";
    case Type::number:
      return "number";
    case Type::string:
      return "string";
    case Type::array:
      return "array";
    case Type::object:
      return "object";
  }
  return "?";
}

namespace {

std::string with_article(Type t) {
  if (t == Type::null) return "null";
  return std::string(t == Type::array || t == Type::object ? "an " : "a ") + type_name(t);
}

[[noreturn]] void wrong_type(const Value& v, Type want, const std::string& what) {
  detail::fail(Status::io_error, what + " must be " + with_article(want) + ", not " + with_article(v.type()));
}

std::string hex2(unsigned c) {
  char b[8];
  std::snprintf(b, sizeof b, "%02X", c);
  return b;
}

// Length of the valid UTF-8 sequence at s[p] (2-4), or 0 (overlongs, surrogates and > U+10FFFF rejected).
size_t utf8_length(std::string_view s, size_t p) {
  auto byte = [&](size_t i) { return p + i < s.size() ? static_cast<unsigned char>(s[p + i]) : 0u; };
  auto cont = [&](size_t i) { return (byte(i) & 0xC0) == 0x80; };
  const unsigned c = byte(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned c1 = byte(1);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) return 0;
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned c1 = byte(1);
    if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// Bounds the recursion: our files nest 4 levels; 256 is far beyond any legitimate use and far below
// what the stack takes.
constexpr int kMaxDepth = 256;

}  // namespace

bool Value::boolean(const std::string& what) const {
  if (type_ != Type::boolean) wrong_type(*this, Type::boolean, what);
  return bool_;
}

double Value::number(const std::string& what) const {
  if (type_ != Type::number) wrong_type(*this, Type::number, what);
  return number_;
}

long Value::integer(const std::string& what, long lo, long hi) const {
  const double v = number(what);
  CORUN_CHECK(v == std::floor(v) && v >= static_cast<double>(lo) && v <= static_cast<double>(hi), Status::io_error,
              what << " must be an integer in [" << lo << ", " << hi << "], not " << v);
  return static_cast<long>(v);
}

const std::string& Value::string(const std::string& what) const {
  if (type_ != Type::string) wrong_type(*this, Type::string, what);
  return string_;
}

const std::vector<Value>& Value::array(const std::string& what) const {
  if (type_ != Type::array) wrong_type(*this, Type::array, what);
  return items_;
}

const std::vector<std::pair<std::string, Value>>& Value::object(const std::string& what) const {
  if (type_ != Type::object) wrong_type(*this, Type::object, what);
  return members_;
}

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

const Value& Value::at(std::string_view key, const std::string& what) const {
  object(what);
  const Value* v = find(key);
  CORUN_CHECK(v != nullptr, Status::io_error, what << " has no '" << key << "'");
  return *v;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : s_(text), source_(source) {}

  /// Hands the elements of the top-level object's array member `key` to `on_item` instead of storing them.
  void stream(std::string_view key, const ItemCallback& on_item) {
    stream_key_ = key;
    on_item_ = &on_item;
  }

  Value document() {
    // A UTF-8 byte order mark is not JSON (RFC 8259 section 8.1 lets parsers ignore it; we name it instead).
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") fail("a UTF-8 byte order mark is not allowed");
    skip_ws();
    if (p_ == s_.size()) fail("the text is empty, expected a JSON value");
    Value v;
    value(v, 0);
    skip_ws();
    if (p_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) { fail_at(p_, why); }

  [[noreturn]] void fail_at(size_t at, const std::string& why) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<unsigned char>(s_[i]) & 0xC0) != 0x80) {
        ++col;  // count characters, not UTF-8 continuation bytes
      }
    }
    std::ostringstream os;
    os << source_ << ": invalid JSON at line " << line << ", column " << col << ": " << why;
    detail::fail(Status::io_error, os.str());
  }

  // What is at the current position, for "expected X, found Y" messages.
  std::string found() const {
    if (p_ >= s_.size()) return "the end of the text";
    const unsigned char c = static_cast<unsigned char>(s_[p_]);
    if (c < 0x20 || c >= 0x7F) {
      char b[16];
      std::snprintf(b, sizeof b, "byte 0x%02X", c);
      return b;
    }
    return std::string("'") + static_cast<char>(c) + "'";
  }

  void skip_ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\t' || s_[p_] == '\r')) ++p_;
  }

  void value(Value& v, int depth) {
    if (p_ >= s_.size()) fail("expected a value, found the end of the text");
    switch (s_[p_]) {
      case '{':
        object(v, depth + 1);
        return;
      case '[':
        array(v, depth + 1);
        return;
      case '"':
        v.type_ = Type::string;
        string(v.string_);
        return;
      case 't':
        literal("true");
        v.type_ = Type::boolean;
        v.bool_ = true;
        return;
      case 'f':
        literal("false");
        v.type_ = Type::boolean;
        return;
      case 'n':
        literal("null");
        v.type_ = Type::null;
        return;
      default:
        if (s_[p_] == '-' || (s_[p_] >= '0' && s_[p_] <= '9')) {
          v.type_ = Type::number;
          v.number_ = number();
          return;
        }
        fail("expected a value (object, array, string, number, true, false or null), found " + found());
    }
  }

  void literal(std::string_view word) {
    if (s_.substr(p_, word.size()) != word) fail("expected '" + std::string(word) + "', found " + found());
    p_ += word.size();
  }

  void object(Value& v, int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    v.type_ = Type::object;
    ++p_;  // '{'
    skip_ws();
    if (p_ < s_.size() && s_[p_] == '}') {
      ++p_;
      return;
    }
    for (;;) {
      skip_ws();
      if (p_ >= s_.size() || s_[p_] != '"') fail("expected a member name in double quotes, found " + found());
      const size_t key_at = p_;
      std::string key;
      string(key);
      skip_ws();
      if (p_ >= s_.size() || s_[p_] != ':') fail("expected ':' after member name \"" + key + "\", found " + found());
      ++p_;
      skip_ws();
      const bool streamed = depth == 1 && on_item_ != nullptr && key == stream_key_ && p_ < s_.size() && s_[p_] == '[';
      v.members_.emplace_back(std::move(key), Value{});
      if (streamed)
        array(v.members_.back().second, depth + 1, on_item_);
      else
        value(v.members_.back().second, depth);
      key_ats_.push_back(key_at);
      skip_ws();
      if (p_ < s_.size() && s_[p_] == ',') {
        ++p_;
        skip_ws();
        if (p_ < s_.size() && s_[p_] == '}') fail("trailing comma before '}'");
        continue;
      }
      if (p_ < s_.size() && s_[p_] == '}') {
        ++p_;
        break;
      }
      fail("expected ',' or '}' in an object, found " + found());
    }
    check_unique_keys(v);
  }

  // Duplicate names make "which one wins" implementation-defined (RFC 8259 section 4): refuse them.
  void check_unique_keys(const Value& v) {
    const size_t n = v.members_.size();
    const size_t first = key_ats_.size() - n;  // this object's key offsets are the last n entries
    if (n > 1) {
      std::vector<size_t> order(n);
      for (size_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return v.members_[a].first != v.members_[b].first ? v.members_[a].first < v.members_[b].first : a < b;
      });
      for (size_t i = 1; i < n; ++i)
        if (v.members_[order[i]].first == v.members_[order[i - 1]].first)
          fail_at(key_ats_[first + order[i]], "duplicate member name \"" + v.members_[order[i]].first + "\"");
    }
    key_ats_.resize(first);
  }

  // With `on_item`, each element is handed over as soon as it is parsed and then dropped.
  void array(Value& v, int depth, const ItemCallback* on_item = nullptr) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    v.type_ = Type::array;
    ++p_;  // '['
    skip_ws();
    if (p_ < s_.size() && s_[p_] == ']') {
      ++p_;
      return;
    }
    for (size_t index = 0;; ++index) {
      skip_ws();
      if (on_item != nullptr) {
        Value item;
        value(item, depth);
        (*on_item)(index, item);
      } else {
        v.items_.emplace_back();
        value(v.items_.back(), depth);
      }
      skip_ws();
      if (p_ < s_.size() && s_[p_] == ',') {
        ++p_;
        skip_ws();
        if (p_ < s_.size() && s_[p_] == ']') fail("trailing comma before ']'");
        continue;
      }
      if (p_ < s_.size() && s_[p_] == ']') {
        ++p_;
        return;
      }
      fail("expected ',' or ']' in an array, found " + found());
    }
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, converted with from_chars (locale-independent).
  double number() {
    const size_t start = p_;
    auto digit = [&] { return p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9'; };
    if (s_[p_] == '-') ++p_;
    if (!digit()) fail("expected a digit after '-', found " + found());
    if (s_[p_] == '0') {
      ++p_;
      if (digit()) fail_at(start, "numbers must not have leading zeros");
    } else {
      while (digit()) ++p_;
    }
    if (p_ < s_.size() && s_[p_] == '.') {
      ++p_;
      if (!digit()) fail("expected a digit after the decimal point, found " + found());
      while (digit()) ++p_;
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      ++p_;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (!digit()) fail("expected a digit in the exponent, found " + found());
      while (digit()) ++p_;
    }
    double v = 0.0;
    const auto r = std::from_chars(s_.data() + start, s_.data() + p_, v);
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow to zero is harmless; overflow is not a finite double.
      bool nonzero_mantissa = false;
      for (size_t i = start; i < p_ && s_[i] != 'e' && s_[i] != 'E'; ++i)
        nonzero_mantissa = nonzero_mantissa || (s_[i] >= '1' && s_[i] <= '9');
      const size_t e = s_.find_first_of("eE", start);
      const bool negative_exponent = e < p_ && s_[e + 1] == '-';
      if (nonzero_mantissa && !negative_exponent)
        fail_at(start, "number " + std::string(s_.substr(start, p_ - start)) + " is out of range");
      return 0.0;
    }
    if (r.ec != std::errc() || r.ptr != s_.data() + p_) fail_at(start, "malformed number");
    return v;
  }

  unsigned hex4() {
    unsigned u = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      if (p_ >= s_.size()) fail("unterminated \\u escape");
      const char c = s_[p_];
      u <<= 4;
      if (c >= '0' && c <= '9')
        u |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        u |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        u |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("expected 4 hex digits after \\u, found " + found());
    }
    return u;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  void string(std::string& out) {
    const size_t start = p_;
    ++p_;  // '"'
    for (;;) {
      // Copy the plain run in one go: most strings have no escapes.
      const size_t run = p_;
      while (p_ < s_.size() && s_[p_] != '"' && s_[p_] != '\\' && static_cast<unsigned char>(s_[p_]) >= 0x20 &&
             static_cast<unsigned char>(s_[p_]) < 0x80)
        ++p_;
      out.append(s_.data() + run, p_ - run);
      if (p_ >= s_.size()) fail_at(start, "unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[p_]);
      if (c == '"') {
        ++p_;
        return;
      }
      if (c < 0x20) fail("control character (byte 0x" + hex2(c) + ") in a string must be escaped");
      if (c >= 0x80) {
        const size_t n = utf8_length(s_, p_);
        if (n == 0) fail("invalid UTF-8 in a string");
        out.append(s_.data() + p_, n);
        p_ += n;
        continue;
      }
      // Backslash.
      ++p_;
      if (p_ >= s_.size()) fail_at(start, "unterminated string");
      const char e = s_[p_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const size_t esc = p_ - 2;
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(p_, 2) != "\\u")
              fail_at(esc, "high surrogate \\u" + hex(cp) + " is not followed by a low surrogate");
            p_ += 2;
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF)
              fail_at(esc, "high surrogate \\u" + hex(cp) + " is not followed by a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail_at(esc, "lone low surrogate \\u" + hex(cp));
          }
          put_utf8(out, cp);
          break;
        }
        default:
          --p_;
          fail("invalid escape '\\" + std::string(1, e) + "' (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
      }
    }
  }

  static std::string hex(unsigned c) {
    char b[8];
    std::snprintf(b, sizeof b, "%04X", c);
    return b;
  }

  std::string_view s_;
  const std::string& source_;
  std::string_view stream_key_;
  const ItemCallback* on_item_ = nullptr;
  size_t p_ = 0;
  std::vector<size_t> key_ats_;  // offsets of member names of the objects being parsed, for messages
};

Value parse(std::string_view text, const std::string& source) {
  return Parser(text, source).document();
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          out += "\\u00" + hex2(c);
      }
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const size_t n = utf8_length(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        ++i;
      } else {
        out.append(s.data() + i, n);
        i += n;
      }
    }
  }
  out += '"';
}

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form, never locale-dependent
  out.append(buf, r.ptr);
}

Value parse_streaming(std::string_view text, const std::string& source, std::string_view key,
                      const ItemCallback& on_item) {
  Parser p(text, source);
  p.stream(key, on_item);
  return p.document();
}

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CORUN_CHECK(in.good(), Status::io_error, "cannot read '" << path << "': no such file or not readable");
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size > 0) {  // a regular file: one read of the right size (no copy through a stringstream)
    text.resize(static_cast<size_t>(size));
    in.seekg(0);
    in.read(text.data(), size);
    CORUN_CHECK(in.gcount() == size, Status::io_error, "reading '" << path << "' failed");
  } else {  // a pipe or an empty file
    in.clear();
    in.seekg(0);
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  CORUN_CHECK(!in.bad(), Status::io_error, "reading '" << path << "' failed");
  return text;
}

}  // namespace

Value parse_file(const std::string& path) {
  return parse(read_whole_file(path), "'" + path + "'");
}

Value parse_file_streaming(const std::string& path, std::string_view key, const ItemCallback& on_item) {
  return parse_streaming(read_whole_file(path), "'" + path + "'", key, on_item);
}

}  // namespace corun::json
