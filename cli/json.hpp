// cli/json.hpp — a minimal streaming JSON writer for result files (objects, arrays, numbers, strings).
#pragma once

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace corun::cli {

class Json {
 public:
  explicit Json(std::ostream& os) : os_(os) {}
  Json& open(const char* key = nullptr) { return begin(key, '{'); }
  Json& close() { return end('}'); }
  Json& open_array(const char* key) { return begin(key, '['); }
  Json& close_array() { return end(']'); }
  Json& field(const char* key, const std::string& v) { prefix(key); quote(v); return *this; }
  Json& field(const char* key, const char* v) { return field(key, std::string(v)); }
  Json& field(const char* key, double v) { prefix(key); number(v); return *this; }
  Json& field(const char* key, int v) { prefix(key); os_ << v; return *this; }
  Json& field(const char* key, long v) { prefix(key); os_ << v; return *this; }
  Json& field(const char* key, bool v) { prefix(key); os_ << (v ? "true" : "false"); return *this; }
  Json& array(const char* key, const std::vector<double>& v) {
    prefix(key);
    os_ << '[';
    for (size_t i = 0; i < v.size(); ++i) { if (i) os_ << ','; number(v[i]); }
    os_ << ']';
    return *this;
  }

 private:
  Json& begin(const char* key, char c) { prefix(key); os_ << c; first_ = true; return *this; }
  Json& end(char c) { os_ << c; first_ = false; return *this; }
  void prefix(const char* key) {
    if (!first_) os_ << ',';
    first_ = false;
    if (key) { quote(key); os_ << ':'; }
  }
  void number(double v) {
    if (!std::isfinite(v)) { os_ << "null"; return; }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    os_ << buf;
  }
  void quote(const std::string& s) {
    os_ << '"';
    for (char c : s) {
      if (c == '"' || c == '\\') os_ << '\\' << c;
      else if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); os_ << b; }
      else os_ << c;
    }
    os_ << '"';
  }
  std::ostream& os_;
  bool first_ = true;
};

}  // namespace corun::cli
