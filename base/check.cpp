#include "base/check.hpp"

#include <cstdio>
#include <cstdlib>

namespace corun::detail {

void fail(Status status, const std::string& message) { throw Error(status, "corun: " + message); }

void abort_with(const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "corun: fatal: %s (%s:%d)\n", message.c_str(), file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace corun::detail
