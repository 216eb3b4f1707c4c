#include "base/env.hpp"

#include "base/check.hpp"
#include "base/parse.hpp"

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
  const auto x = parse::integer(*v);
  CORUN_CHECK(x && *x >= min && *x <= max, Status::invalid_config,
              name << "='" << *v << "' is not an integer in [" << min << ", " << max << "]");
  return *x;
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
