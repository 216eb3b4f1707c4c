#include "cli/non_finite.hpp"

#include "base/check.hpp"

#include <cmath>
#include <cstdio>

namespace corun::cli {

namespace {

const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::input:
      return "input";
    case ValueKind::param:
      return "parameter";
    case ValueKind::constant:
      return "constant";
    case ValueKind::activation:
      return "the output of op";
    case ValueKind::gradient:
      return "the gradient output of op";
    case ValueKind::state:
      return "optimizer state";
  }
  return "value";
}

std::string element_text(const std::vector<float>& v, size_t at) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "element %zu is %g", at, static_cast<double>(v[at]));
  return buf;
}

}  // namespace

size_t first_non_finite(const std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) return i;
  return v.size();
}

void check_finite_parameter(const std::string& tensor, const std::string& file, const std::vector<float>& data) {
  const size_t at = first_non_finite(data);
  CORUN_CHECK(at == data.size(), Status::invalid_argument,
              "parameter '" << tensor << "' in " << file << " is not finite: " << element_text(data, at)
                            << "; training from it gives a nan loss (pass --allow-non-finite to load it anyway)");
}

std::string first_non_finite_value(Engine& engine, Graph& g) {
  // Parameters (and momentum) last: the step's updates already ran, so a parameter turned nan by this step's
  // gradients must not hide the op whose output went bad first.
  for (const bool updated : {false, true}) {
    for (int id = 0; id < g.num_values(); ++id) {
      const Tensor t = g.value(id);
      const ValueKind k = g.kind(t);
      if ((k == ValueKind::param || k == ValueKind::state) != updated) continue;
      std::vector<float> v;
      try {
        v = engine.read(g, t);
      } catch (const Error&) {
        continue;  // removed by a graph pass (fused away): not a value any more
      }
      const size_t at = first_non_finite(v);
      if (at < v.size()) return std::string(kind_name(k)) + " '" + t.name() + "' (" + element_text(v, at) + ")";
    }
  }
  return "";
}

}  // namespace corun::cli
