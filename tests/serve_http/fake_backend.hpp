// tests/serve_http/fake_backend.hpp — a ModelBackend for the protocol layer's unit tests, without an engine: model
// 'double' takes x [-1,4] FP32 (and ids [-1,2] INT64 below 10) and answers y = 2 x and z = the ids' sum per row.
// It can be told to refuse (Overloaded), to fail, or to take a while, as the real model server would.
#pragma once

#include "serve/endpoint/model_backend.hpp"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace corun::serve::fakes {

inline ModelMetadata fake_metadata(int max_batch = 4) {
  ModelMetadata m;
  m.name = "double";
  m.inputs = {{"x", "FP32", {-1, 4}, 0}, {"ids", "INT64", {-1, 2}, 10}};
  m.outputs = {{"y", "FP32", {-1, 4}, 0}, {"z", "FP32", {-1, 1}, 0}};
  m.max_batch = max_batch;
  return m;
}

class FakeBackend : public ModelBackend {
 public:
  explicit FakeBackend(ModelMetadata m = fake_metadata()) : meta_(std::move(m)) {}

  const ModelMetadata& metadata() const override { return meta_; }

  std::future<InferResult> infer(std::vector<RequestTensor> inputs, bool priority) override {
    if (overloaded) {
      ++rejected_;
      throw Overloaded("model 'double': the queue is full (--max-queue 1)", 2);
    }
    last_priority = priority;
    return std::async(std::launch::async, [this, inputs = std::move(inputs)] {
      std::this_thread::sleep_for(delay);
      if (fail) throw std::runtime_error("kernel failed");
      InferResult r;
      const int64_t rows = inputs[0].shape[0];
      RequestTensor y{"y", {rows, 4}, inputs[0].data}, z{"z", {rows, 1}, std::vector<float>(rows, 0.0f)};
      for (float& v : y.data) v *= 2.0f;
      for (int64_t i = 0; i < rows; ++i) z.data[i] = inputs[1].data[2 * i] + inputs[1].data[2 * i + 1];
      r.outputs = {y, z};
      r.batch_rows = static_cast<int>(rows);
      ++ok_;
      return r;
    });
  }

  ModelCounters counters() const override {
    ModelCounters c;
    c.requests_ok = ok_;
    c.requests_rejected = rejected_;
    return c;
  }

  bool ready() const override { return true; }

  std::atomic<bool> overloaded{false}, fail{false}, last_priority{false};
  std::chrono::milliseconds delay{0};

 private:
  ModelMetadata meta_;
  std::atomic<uint64_t> ok_{0}, rejected_{0};
};

}  // namespace corun::serve::fakes
