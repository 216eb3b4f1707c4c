// tests/common/error_matchers.hpp — helpers for asserting on corun::Error (status and message contents).
#pragma once

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace corun::testing {

inline const char* status_name(Status s) {
  switch (s) {
    case Status::invalid_argument:
      return "invalid_argument";
    case Status::invalid_config:
      return "invalid_config";
    case Status::io_error:
      return "io_error";
    case Status::runtime_error:
      return "runtime_error";
  }
  return "?";
}

/// Runs `f`, which must throw corun::Error with `expected` status. Returns what() ("" and a failure
/// otherwise).
template <class F>
std::string error_message(F&& f, Status expected) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(status_name(e.status()), std::string(status_name(expected))) << "message: " << e.what();
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("corun: ", 0), 0u) << "what() must start with 'corun: ': " << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected corun::Error, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected corun::Error(" << status_name(expected) << "), nothing was thrown";
  return "";
}

/// Expects every string of `parts` to occur in `text`.
inline void expect_contains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not found in: " << text;
}

}  // namespace corun::testing

/// Expects `stmt` to throw corun::Error with `status` and a message containing every one of the strings.
#define EXPECT_CORUN_ERROR(stmt, status, ...)                                                        \
  do {                                                                                               \
    SCOPED_TRACE(#stmt);                                                                             \
    const std::string corun_msg_ = ::corun::testing::error_message([&] { (void)(stmt); }, (status)); \
    ::corun::testing::expect_contains(corun_msg_, {__VA_ARGS__});                                    \
  } while (0)
