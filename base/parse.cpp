#include "base/parse.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace corun::parse {

namespace {
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
}  // namespace

std::optional<long> integer(const std::string& text) {
  if (text.empty() || !(digit(text[0]) || text[0] == '-')) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> real(const std::string& text) {
  if (text.empty() || !(digit(text[0]) || text[0] == '-' || text[0] == '.')) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace corun::parse
