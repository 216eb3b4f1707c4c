#include "core/base/env.hpp"

#include "core/base/check.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace corun::env {

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::optional<long> get_int(const char* name, long min, long max) {
  auto v = get(name);
  if (!v) return std::nullopt;
  // strtol alone would accept leading blanks and '+': only an optional '-' and digits are an integer here.
  const bool starts_ok = std::isdigit(static_cast<unsigned char>((*v)[0])) || (*v)[0] == '-';
  errno = 0;
  char* end = nullptr;
  const long x = std::strtol(v->c_str(), &end, 10);
  CORUN_CHECK(starts_ok && errno == 0 && end != v->c_str() && *end == '\0' && x >= min && x <= max, Status::invalid_config,
              name << "='" << *v << "' is not an integer in [" << min << ", " << max << "]");
  return x;
}

std::optional<std::string> get_choice(const char* name, const std::vector<std::string>& choices) {
  auto v = get(name);
  if (!v) return std::nullopt;
  for (const auto& c : choices)
    if (*v == c) return v;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  detail::fail(Status::invalid_config, std::string(name) + "='" + *v + "' is not valid; use one of: " + list);
}

std::optional<bool> get_bool(const char* name) {
  auto v = get_choice(name, {"0", "1"});
  if (!v) return std::nullopt;
  return *v == "1";
}

}  // namespace corun::env
