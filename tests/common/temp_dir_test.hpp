// tests/common/temp_dir_test.hpp — a fixture giving each test its own fresh directory under /tmp.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace corun::testing {

/// Each test gets a new directory /tmp/corun_<prefix>_XXXXXX. It is removed after a passing test and kept
/// after a failing one, so the files can be inspected.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    std::string tmpl = "/tmp/corun_" + prefix_ + "_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;

 private:
  std::string prefix_;
};

}  // namespace corun::testing
