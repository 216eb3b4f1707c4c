// base/check.hpp — how corun reports errors internally.
//
//   CORUN_CHECK(cond, status, msg)  user-facing check in every build: throws corun::Error(status, "corun: " msg)
//   CORUN_ASSERT(cond)              internal invariant, debug builds only
//   CORUN_ABORT(msg)                unrecoverable state (e.g. inside a StarPU callback): prints and aborts
#pragma once

#include <corun/error.hpp>

#include <sstream>
#include <string>

namespace corun::detail {

/// Throws corun::Error with "corun: " prepended to `message`.
[[noreturn]] void fail(Status status, const std::string& message);

/// Prints "corun: fatal: <message> (file:line)" and aborts; for states no caller can recover from.
[[noreturn]] void abort_with(const char* file, int line, const std::string& message);

}  // namespace corun::detail

/// Builds a message with operator<< and throws corun::Error when `cond` is false.
#define CORUN_CHECK(cond, status, msg)                        \
  do {                                                        \
    if (!(cond)) {                                            \
      std::ostringstream corun_check_os_;                     \
      corun_check_os_ << msg;                                 \
      ::corun::detail::fail((status), corun_check_os_.str()); \
    }                                                         \
  } while (0)

#define CORUN_ABORT(msg)                                                  \
  do {                                                                    \
    std::ostringstream corun_abort_os_;                                   \
    corun_abort_os_ << msg;                                               \
    ::corun::detail::abort_with(__FILE__, __LINE__, corun_abort_os_.str()); \
  } while (0)

#ifdef NDEBUG
#define CORUN_ASSERT(cond) ((void)0)
#else
#define CORUN_ASSERT(cond) \
  do {                     \
    if (!(cond)) CORUN_ABORT("assertion failed: " #cond); \
  } while (0)
#endif
