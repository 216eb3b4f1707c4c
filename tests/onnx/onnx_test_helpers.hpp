// tests/onnx/onnx_test_helpers.hpp — importing an OnnxModelBuilder's model, running it inline and catching
// an import error's message, shared by the converter tests.
#pragma once

#include "onnx/importer.hpp"
#include "onnx_model_builder.hpp"

#include <corun/error.hpp>
#include <corun/inline.hpp>
#include <corun/onnx.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace corun::testing {

/// The message of the corun::Error `fn` throws, or "" when it throws none.
template <typename F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline OnnxModel import(const OnnxModelBuilder& b, const OnnxImportOptions& o = {}) {
  return onnx_import::import_model(b.model, ".", "test.onnx", o);
}

/// Copies `x` into the model's first input, runs it inline and returns the output named `name`.
inline std::vector<float> run(OnnxModel& m, const std::vector<float>& x, const std::string& name) {
  std::copy(x.begin(), x.end(), m.graph.data(m.inputs[0]));
  InlineRunner runner(m.graph);
  runner.run();
  const Tensor t = m.graph.find(name);
  const float* p = m.graph.data(t);
  return std::vector<float>(p, p + t.shape().numel());
}

/// A test with its own folder of ONNX files under the temp directory, removed afterwards.
class OnnxDirTest : public ::testing::Test {
 protected:
  explicit OnnxDirTest(const std::string& prefix) : prefix_(prefix) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / (prefix_ + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace corun::testing
