// serve/endpoint/model_backend.hpp — what `corun serve`'s protocol layer (serve/http/) asks of a served model,
// and what the model server (serve/endpoint/model_server.hpp) gives it. The protocol layer parses and checks a
// KServe v2 request against metadata(), hands the inputs to infer() and turns the result (or the exception)
// into a response; it never sees the engine. The model server owns the queue, the dynamic batching and the
// graph instances that run on the one Engine of the process.
#pragma once

#include <cstdint>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

namespace corun::serve {

/// One tensor of a model's signature, as GET /v2/models/{name} reports it.
struct TensorSpec {
  std::string name;
  /// KServe v2 datatype: "FP32", or "INT64" for token ids (the model server holds them as exact integers in
  /// f32; the protocol layer accepts INT64 and INT32 for such an input and checks index_limit).
  std::string datatype = "FP32";
  /// Dimensions; shape[0] == -1 is the batch axis (requests may carry 1..max_batch rows).
  std::vector<int64_t> shape;
  /// INT64 inputs: ids must be in [0, index_limit); -1 when no table bounds them. 0 for FP32.
  int64_t index_limit = 0;
};

struct ModelMetadata {
  std::string name;            ///< {name} in the URLs
  std::string platform = "onnx";
  std::vector<std::string> versions = {"1"};
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  int max_batch = 1;  ///< the most rows one request (and one merged batch) may have
};

/// A tensor of one request: rows x the signature's other dimensions, f32, row-major.
struct RequestTensor {
  std::string name;
  std::vector<int64_t> shape;  ///< shape[0] = this request's rows
  std::vector<float> data;
};

/// What infer() returns: outputs in metadata().outputs order, each with the request's rows.
struct InferResult {
  std::vector<RequestTensor> outputs;
  double queue_us = 0.0;    ///< from infer() to the start of the batch that ran it
  double compute_us = 0.0;  ///< that batch's run (write, run, read)
  int batch_rows = 0;       ///< rows of the merged batch it ran in (padding excluded)
  int co_running = 0;       ///< batches of any model in flight when it started, itself included
};

/// The queue is full (or the server is draining): the protocol layer answers 503 with Retry-After.
struct Overloaded : std::runtime_error {
  Overloaded(const std::string& what, int retry_after) : std::runtime_error(what), retry_after_s(retry_after) {}
  int retry_after_s = 1;
};

/// Counters since start, for /metrics (cumulative, as Prometheus wants).
struct ModelCounters {
  uint64_t requests_ok = 0;
  uint64_t requests_failed = 0;    ///< a run that threw (a kernel error): 500
  uint64_t requests_rejected = 0;  ///< Overloaded: 503
  double queue_us_total = 0.0;
  double compute_us_total = 0.0;   ///< per request (a batch's time counts once per request in it)
  uint64_t batches = 0;
  uint64_t batch_rows_total = 0;
  /// batches run with 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, > 64 rows
  std::vector<uint64_t> batch_rows_histogram = std::vector<uint64_t>(8, 0);
  int queued_requests = 0;  ///< now
  int in_flight_batches = 0;  ///< now, this model's batches running
};

class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  virtual const ModelMetadata& metadata() const = 0;
  /// Queues one request whose inputs the protocol layer checked against metadata() (every input once, in
  /// metadata order, the same rows in each, 1 <= rows <= max_batch). Thread-safe; never blocks on the run.
  /// `priority`: a latency-critical request, taken before the others and its tasks before theirs.
  /// Throws Overloaded when the queue is full or the server drains. The future holds the result, or the
  /// corun::Error of a run that failed.
  virtual std::future<InferResult> infer(std::vector<RequestTensor> inputs, bool priority) = 0;
  virtual ModelCounters counters() const = 0;
  /// Whether the model is loaded and can run requests (GET /v2/models/{name}/ready).
  virtual bool ready() const = 0;
};

}  // namespace corun::serve
