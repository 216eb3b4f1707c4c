#include "sched/layout.hpp"

#include "base/check.hpp"
#include "base/parse.hpp"

#include <mutex>

namespace corun::sched {

ExecutorLayout parse_layout(const std::string& text, const std::string& what) {
  const auto x = text.find('x');
  CORUN_CHECK(x != std::string::npos && x > 0 && x + 1 < text.size(), Status::invalid_config,
              what << "='" << text << "' is not an executor layout; write NxK (N executors of K cores), e.g. 2x1");
  const auto n = parse::integer(text.substr(0, x));
  const auto k = parse::integer(text.substr(x + 1));
  CORUN_CHECK(n && k && *n >= 1 && *k >= 1 && *n <= 4096 && *k <= 4096, Status::invalid_config,
              what << "='" << text << "': N and K in NxK must be integers from 1 to 4096 (e.g. 2x1)");
  return ExecutorLayout{static_cast<int>(*n), static_cast<int>(*k)};
}

int default_executor_width(int cores) {
  if (cores <= 8) return 1;
  int w = 1;
  while ((2 * w) * (2 * w) <= cores) w *= 2;
  return w;
}

namespace {
std::mutex g_mutex;
PolicyOptions g_options;
ExecutorLayout g_effective;
std::vector<int> g_workers;
}  // namespace

void set_policy_options(const PolicyOptions& options) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_options = options;
  g_effective = {};
  g_workers.clear();
}

const PolicyOptions& policy_options() {
  // Written before starpu_init only; StarPU's threads read it after.
  return g_options;
}

ExecutorLayout effective_layout() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_effective;
}

std::vector<int> executor_workers() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_workers;
}

void set_effective_layout(const ExecutorLayout& layout, const std::vector<int>& workers) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_effective = layout;
  g_workers = workers;
}

}  // namespace corun::sched
