// tests/cli/cli_json.hpp — a minimal strict JSON reader for checking the files `corun` writes (test only).
#pragma once

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace corun::testing {

// Just enough JSON to check the result file strictly (RFC 8259 syntax, no extensions).
struct Json {
  enum class Type { null, boolean, number, string, array, object } type = Type::null;
  bool b = false;
  double num = 0.0;
  std::string str;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  const Json* get(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}
  // Parses one value followed only by whitespace; sets error() otherwise.
  Json parse() {
    Json v = value();
    ws();
    if (err_.empty() && p_ != s_.size()) fail("trailing text");
    return v;
  }
  const std::string& error() const { return err_; }

 private:
  void fail(const std::string& why) {
    if (err_.empty()) err_ = why + " at offset " + std::to_string(p_);
    p_ = s_.size();
  }
  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\t' || s_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    ws();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool literal(const char* w) {
    const std::string lit(w);
    if (s_.compare(p_, lit.size(), lit) == 0) {
      p_ += lit.size();
      return true;
    }
    return false;
  }
  std::string string() {
    std::string r;
    if (!eat('"')) {
      fail("expected a string");
      return r;
    }
    while (p_ < s_.size() && s_[p_] != '"') {
      const char c = s_[p_++];
      if (static_cast<unsigned char>(c) < 0x20) {
        fail("control character in a string");
        return r;
      }
      if (c != '\\') {
        r += c;
        continue;
      }
      if (p_ >= s_.size()) break;
      const char e = s_[p_++];
      if (e == 'u') {
        if (p_ + 4 > s_.size()) break;
        r += static_cast<char>(std::stoi(s_.substr(p_, 4), nullptr, 16));
        p_ += 4;
      } else if (std::string("\"\\/bfnrt").find(e) != std::string::npos) {
        r += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
      } else {
        fail("bad escape");
        return r;
      }
    }
    if (p_ >= s_.size()) {
      fail("unterminated string");
      return r;
    }
    ++p_;
    return r;
  }
  Json value() {
    Json v;
    ws();
    if (p_ >= s_.size()) {
      fail("unexpected end");
      return v;
    }
    const char c = s_[p_];
    if (c == '{') {
      ++p_;
      v.type = Json::Type::object;
      if (eat('}')) return v;
      do {
        std::string k = string();
        if (!eat(':')) fail("expected ':'");
        v.members.emplace_back(k, value());
      } while (err_.empty() && eat(','));
      if (!eat('}')) fail("expected '}'");
    } else if (c == '[') {
      ++p_;
      v.type = Json::Type::array;
      if (eat(']')) return v;
      do v.items.push_back(value());
      while (err_.empty() && eat(','));
      if (!eat(']')) fail("expected ']'");
    } else if (c == '"') {
      v.type = Json::Type::string;
      v.str = string();
    } else if (literal("true") || literal("false")) {
      v.type = Json::Type::boolean;
      v.b = s_[p_ - 1] == 'e' && s_[p_ - 2] == 'u';
    } else if (literal("null")) {
      v.type = Json::Type::null;
    } else {
      // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
      const size_t start = p_;
      auto digits = [&] {
        const size_t d = p_;
        while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) ++p_;
        return p_ > d;
      };
      if (p_ < s_.size() && s_[p_] == '-') ++p_;
      if (p_ < s_.size() && s_[p_] == '0')
        ++p_;
      else if (!digits()) {
        fail("bad value");
        return v;
      }
      if (p_ < s_.size() && s_[p_] == '.') {
        ++p_;
        if (!digits()) fail("bad fraction");
      }
      if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
        ++p_;
        if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
        if (!digits()) fail("bad exponent");
      }
      v.type = Json::Type::number;
      v.num = std::strtod(s_.substr(start, p_ - start).c_str(), nullptr);
    }
    return v;
  }

  const std::string s_;
  size_t p_ = 0;
  std::string err_;
};

}  // namespace corun::testing
