// The .npy header dict: a small recursive-descent parser of the Python literals NumPy writes.
#include "base/npy_header.hpp"

#include "base/check.hpp"

#include <cctype>
#include <limits>
#include <set>

namespace corun::detail {
namespace {

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    std::set<std::string> seen;
    skip_ws();
    expect('{', "the header must be a dict literal starting with '{'");
    skip_ws();
    while (peek() != '}') {
      const size_t key_at = pos_;
      const std::string key = string_literal("a quoted key");
      if (!seen.insert(key).second) bad("key '" + key + "' appears twice");
      skip_ws();
      expect(':', "':' after key '" + key + "'");
      skip_ws();
      if (key == "descr") {
        h.descr = string_literal("the dtype string of 'descr'");
      } else if (key == "fortran_order") {
        h.fortran_order = boolean("'fortran_order'");
      } else if (key == "shape") {
        const size_t start = pos_;
        h.shape = tuple_of_ints();
        h.shape_text = s_.substr(start, pos_ - start);
      } else {
        pos_ = key_at;
        bad("unexpected key '" + key + "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != '}') {
        bad("expected ',' or '}' after the value of '" + key + "'");
      }
    }
    ++pos_;  // '}'
    skip_ws();
    if (pos_ != s_.size()) bad("unexpected text after the header dict");
    for (const char* key : {"descr", "fortran_order", "shape"})
      if (!seen.count(key)) bad(std::string("header has no '") + key + "' entry");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const {
    fail(Status::io_error, "'" + path_ + "' is not a usable .npy file: " + why + " (header column " +
                               std::to_string(pos_ + 1) + ": " + excerpt() + ")");
  }
  std::string excerpt() const {
    std::string e = s_.substr(pos_ < s_.size() ? pos_ : s_.size(), 24);
    const size_t nl = e.find('\n');
    if (nl != std::string::npos) e.resize(nl);
    return e.empty() ? "end of header" : "'" + e + "'";
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c) bad("expected " + what);
    ++pos_;
  }
  static bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

  std::string string_literal(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') bad("expected " + what);
    const size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') bad("escape sequences in strings are not supported");
      if (s_[pos_] == '\n') bad("unterminated string");
      ++pos_;
    }
    if (pos_ >= s_.size()) bad("unterminated string");
    return s_.substr(start, pos_++ - start);
  }

  bool boolean(const std::string& what) {
    for (const char* word : {"True", "False"}) {
      const std::string w = word;
      if (s_.compare(pos_, w.size(), w) == 0 && !is_ident(pos_ + w.size() < s_.size() ? s_[pos_ + w.size()] : ' ')) {
        pos_ += w.size();
        return w == "True";
      }
    }
    bad("the value of " + what + " must be True or False");
  }

  // A decimal Python integer: no sign, no leading zeros, nothing glued to it ("32garbage", "16.9").
  int64_t integer() {
    const size_t start = pos_;
    if (!std::isdigit(static_cast<unsigned char>(peek())))
      bad("extents in 'shape' must be non-negative integers");
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int d = s_[pos_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) bad("an extent in 'shape' overflows 64 bits");
      v = v * 10 + d;
      ++pos_;
    }
    if (is_ident(peek())) {
      pos_ = start;
      bad("extents in 'shape' must be integers");
    }
    if (s_[start] == '0' && pos_ - start > 1) {
      pos_ = start;
      bad("an extent with a leading zero is not a Python integer");
    }
    return v;
  }

  // "()", "(5,)", "(2, 3)", "(2, 3,)"; "(5)" is the integer 5 in Python, not a tuple.
  std::vector<int64_t> tuple_of_ints() {
    expect('(', "'shape' to be a tuple such as (2, 3)");
    std::vector<int64_t> dims;
    bool trailing_comma = false;
    skip_ws();
    while (peek() != ')') {
      dims.push_back(integer());
      skip_ws();
      trailing_comma = false;
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
        skip_ws();
      } else if (peek() != ')') {
        bad("expected ',' or ')' in 'shape'");
      }
    }
    if (dims.size() == 1 && !trailing_comma) bad("'shape' (n) is an integer in Python; a 1-D shape is written (n,)");
    ++pos_;  // ')'
    return dims;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

NpyHeader parse_npy_header(const std::string& text, const std::string& path) {
  return HeaderParser(text, path).parse();
}

}  // namespace corun::detail
