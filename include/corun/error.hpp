// corun/error.hpp — the one exception type of corun's public API.
//
// Usage:
//   try { g.matmul(a, b); } catch (const corun::Error& e) { std::cerr << e.what(); return 1; }
//
// Every user mistake (bad shape, unknown policy, bad file, bad environment variable) throws corun::Error
// with a message that says what was wrong and how to fix it. StarPU's int returns are turned into
// corun::Error at one place (base/starpu_check.hpp) so the C runtime's codes never leak.
#pragma once

#include <stdexcept>
#include <string>

namespace corun {

/// What kind of failure an Error reports; lets callers (and the CLI's exit codes) tell them apart.
enum class Status {
  invalid_argument,  ///< a shape, flag or value the user gave is wrong
  invalid_config,    ///< an environment variable or configuration is wrong (e.g. unknown policy)
  io_error,          ///< a file could not be read or written, or is malformed
  runtime_error,     ///< StarPU or a kernel failed while running
};

/// The exception thrown by corun's public API. what() starts with "corun: " and is meant for humans.
class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  /// The failure category.
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

}  // namespace corun
