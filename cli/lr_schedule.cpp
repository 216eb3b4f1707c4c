#include "cli/lr_schedule.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace corun {
namespace {

constexpr const char* kForms = "expected constant, step:N:GAMMA (N a whole number >= 1, GAMMA in (0, 1]) or "
                               "cosine[:FLOOR] (FLOOR >= 0, below the learning rate)";

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw std::invalid_argument("--lr-schedule '" + text + "': " + why + "; " + kForms);
}

double number(const std::string& text, const std::string& field, const char* what) {
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (field.empty() || used != field.size() || !std::isfinite(v)) bad(text, std::string(what) + " '" + field + "' is not a number");
  return v;
}

}  // namespace

LrSchedule LrSchedule::parse(const std::string& text) {
  LrSchedule s;
  if (text == "constant") return s;
  if (text.rfind("step:", 0) == 0) {
    const std::string rest = text.substr(5);
    const size_t colon = rest.find(':');
    if (colon == std::string::npos) bad(text, "step needs N and GAMMA");
    const double n = number(text, rest.substr(0, colon), "N");
    const double gamma = number(text, rest.substr(colon + 1), "GAMMA");
    if (n < 1 || n != std::floor(n) || n > 1e15) bad(text, "N must be a whole number >= 1");
    if (!(gamma > 0.0 && gamma <= 1.0)) bad(text, "GAMMA must be in (0, 1]");
    s.kind = Kind::step;
    s.step_every = static_cast<int64_t>(n);
    s.gamma = gamma;
    return s;
  }
  if (text == "cosine" || text.rfind("cosine:", 0) == 0) {
    s.kind = Kind::cosine;
    if (text.size() > 6) s.floor = number(text, text.substr(7), "FLOOR");
    if (s.floor < 0.0) bad(text, "FLOOR must be >= 0");
    return s;
  }
  bad(text, "unknown schedule");
}

float LrSchedule::at(float base, int64_t k, int64_t total) const {
  if (warmup > 0 && k < warmup) return base * static_cast<float>(k + 1) / static_cast<float>(warmup);
  const int64_t t = k - warmup;
  switch (kind) {
    case Kind::constant:
      return base;
    case Kind::step:
      return static_cast<float>(static_cast<double>(base) * std::pow(gamma, static_cast<double>(t / step_every)));
    case Kind::cosine: {
      const int64_t span = total - warmup;
      if (span <= 0) return base;
      const double pi = std::acos(-1.0);
      const double frac = static_cast<double>(std::min(t, span)) / static_cast<double>(span);
      return static_cast<float>(floor + (static_cast<double>(base) - floor) * (1.0 + std::cos(pi * frac)) / 2.0);
    }
  }
  return base;
}

std::string LrSchedule::str() const {
  char buf[96];
  switch (kind) {
    case Kind::constant:
      return "constant";
    case Kind::step:
      std::snprintf(buf, sizeof buf, "step:%lld:%.17g", static_cast<long long>(step_every), gamma);
      return buf;
    case Kind::cosine:
      std::snprintf(buf, sizeof buf, "cosine:%.17g", floor);
      return buf;
  }
  return "constant";
}

}  // namespace corun
