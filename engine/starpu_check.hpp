// engine/starpu_check.hpp — the one place StarPU's int returns become corun::Error.
#pragma once

#include "base/check.hpp"

#include <cstring>
#include <string>

namespace corun {

/// Throws corun::Error(runtime_error) naming the call when StarPU returned a negative errno.
inline void starpu_check(int ret, const char* what) {
  if (ret == 0) return;
  std::string why = ret == -19 /* -ENODEV */ ? "no worker available (check STARPU_NCPU, STARPU_RESERVE_NCPU and the CPU affinity mask)"
                                              : std::strerror(ret < 0 ? -ret : ret);
  detail::fail(Status::runtime_error, std::string(what) + " failed: " + why);
}

}  // namespace corun
