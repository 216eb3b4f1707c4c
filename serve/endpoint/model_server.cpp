// The model server: runners that take batches from the RequestQueue and run them on graph instances of the
// model, one instance per (runner, bucket), each bound to the process's Engine and run with submit/wait.
#include "serve/endpoint/model_server.hpp"

#include "serve/endpoint/model_instance.hpp"
#include "serve/endpoint/request_queue.hpp"

#include <corun/engine.hpp>
#include <corun/error.hpp>

#include "base/check.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

namespace corun::serve {

namespace {

// Batches of every model running now: what a batch waits for more rows behind (RequestQueue), and what
// InferResult::co_running reports.
std::atomic<int> g_batches_running{0};

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// Index of `rows` in ModelCounters::batch_rows_histogram: 1, 2, 3-4, 5-8, ..., > 64.
size_t histogram_bin(int rows) {
  size_t bin = 0;
  for (int top = 1; rows > top && bin + 1 < 8; top *= 2) ++bin;
  return bin;
}

class ModelServerImpl final : public ModelServer {
 public:
  ModelServerImpl(Engine& engine, ModelSource source, const ServerOptions& options)
      : engine_(engine),
        source_(std::move(source)),
        queue_(limits(source_, options), [] { return g_batches_running.load() > 0; }) {
    const int runners = options.max_in_flight > 0 ? options.max_in_flight : std::max(1, engine.info().workers);
    // Every runner's first instance now: a model that does not run fails here, and no request pays the import.
    for (int r = 0; r < runners; ++r) {
      runners_.push_back(std::make_unique<Runner>());
      runners_.back()->instance(source_, 1).warm_up(engine_);
    }
    for (auto& runner : runners_) runner->thread = std::thread([this, r = runner.get()] { run(*r); });
    ready_ = true;
  }

  ~ModelServerImpl() override { drain(); }

  const ModelMetadata& metadata() const override { return source_.metadata; }
  bool ready() const override { return ready_.load(); }

  std::future<InferResult> infer(std::vector<RequestTensor> inputs, bool priority) override {
    PendingRequest request;
    // An unbatched model's request is one run whatever its first dimensions.
    request.rows = !source_.metadata.batched ? 1
                   : inputs.empty() || inputs[0].shape.empty() ? 0
                                                               : static_cast<int>(inputs[0].shape[0]);
    CORUN_CHECK(request.rows >= 1 && request.rows <= source_.metadata.max_batch, Status::invalid_argument,
                "a request of " << request.rows << " rows: model '" << source_.metadata.name << "' takes 1 to "
                                << source_.metadata.max_batch << " rows per request");
    request.inputs = std::move(inputs);
    request.priority = priority;
    try {
      return queue_.push(std::move(request));
    } catch (const Overloaded&) {
      std::lock_guard<std::mutex> lock(counters_mu_);
      ++counters_.requests_rejected;
      throw;
    }
  }

  ModelCounters counters() const override {
    std::lock_guard<std::mutex> lock(counters_mu_);
    ModelCounters c = counters_;
    c.queued_requests = queue_.waiting();
    return c;
  }

  void drain() override {
    ready_ = false;
    queue_.close();
    for (auto& runner : runners_)
      if (runner->thread.joinable()) runner->thread.join();
  }

 private:
  struct Runner {
    std::thread thread;
    std::map<int, std::unique_ptr<ModelInstance>> instances;  // by bucket rows
    ModelInstance& instance(const ModelSource& source, int rows) {
      const int bucket = source.bucket_for(rows);
      auto& slot = instances[bucket];
      if (!slot) slot = std::make_unique<ModelInstance>(source, bucket);
      return *slot;
    }
  };

  static QueueLimits limits(const ModelSource& source, const ServerOptions& options) {
    QueueLimits l;
    l.max_rows = source.metadata.max_batch;
    l.max_queue = options.max_queue;
    l.max_delay = std::chrono::microseconds(options.max_queue_delay_us);
    return l;
  }

  // Between batches, while nothing waits, a runner builds and warms its next bucket's graph: the first burst
  // of a bucket's size then finds it ready instead of waiting for an import (ResNet-18 served 27 requests/s
  // instead of 250 for its first 2 s under 4 clients, bench/serve_load.sh).
  void run(Runner& runner) {
    for (;;) {
      while (queue_.idle() && warm_next_bucket(runner)) {
      }
      std::optional<Batch> batch = queue_.take();
      if (!batch) break;
      run_batch(runner, *batch);
    }
    for (auto& [bucket, instance] : runner.instances) instance->release(engine_);
  }

  // False once every bucket has its graph. A bucket that fails to build is left to the batch that needs it,
  // which reports the error to its requests.
  bool warm_next_bucket(Runner& runner) {
    for (int bucket : source_.buckets) {
      if (runner.instances.count(bucket) && runner.instances[bucket]->warm()) continue;
      try {
        runner.instance(source_, bucket).warm_up(engine_);
      } catch (const std::exception&) {
        return false;
      }
      return true;
    }
    return false;
  }

  void run_batch(Runner& runner, Batch& batch) {
    const Clock::time_point start = Clock::now();
    const int co_running = ++g_batches_running;
    in_flight(+1);
    std::vector<std::vector<RequestTensor>> outputs;
    std::exception_ptr error;
    try {
      ModelInstance& instance = runner.instance(source_, batch.rows);
      if (!instance.warm()) instance.warm_up(engine_);
      outputs = instance.run(engine_, batch);
    } catch (...) {
      error = std::current_exception();
    }
    const Clock::time_point end = Clock::now();
    --g_batches_running;
    in_flight(-1);
    if (error)
      fail(batch, error);
    else
      deliver(batch, outputs, start, end, co_running);
  }

  void in_flight(int delta) {
    std::lock_guard<std::mutex> lock(counters_mu_);
    counters_.in_flight_batches += delta;
  }

  void deliver(Batch& batch, std::vector<std::vector<RequestTensor>>& outputs, Clock::time_point start,
               Clock::time_point end, int co_running) {
    const double compute_us = us_between(start, end);
    {
      std::lock_guard<std::mutex> lock(counters_mu_);
      ++counters_.batches;
      counters_.batch_rows_total += static_cast<uint64_t>(batch.rows);
      ++counters_.batch_rows_histogram[histogram_bin(batch.rows)];
      for (const PendingRequest& r : batch.requests) counters_.queue_us_total += us_between(r.queued_at, start);
      counters_.compute_us_total += compute_us * static_cast<double>(batch.requests.size());
      counters_.requests_ok += batch.requests.size();
    }
    for (size_t k = 0; k < batch.requests.size(); ++k) {
      InferResult result;
      result.outputs = std::move(outputs[k]);
      result.queue_us = us_between(batch.requests[k].queued_at, start);
      result.compute_us = compute_us;
      result.batch_rows = batch.rows;
      result.co_running = co_running;
      batch.requests[k].result.set_value(std::move(result));
    }
  }

  void fail(Batch& batch, std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(counters_mu_);
      counters_.requests_failed += batch.requests.size();
    }
    for (PendingRequest& r : batch.requests) r.result.set_exception(error);
  }

  Engine& engine_;
  ModelSource source_;
  RequestQueue queue_;
  std::vector<std::unique_ptr<Runner>> runners_;
  std::atomic<bool> ready_{false};
  mutable std::mutex counters_mu_;
  ModelCounters counters_;
};

}  // namespace

namespace {
void check_options(const ServerOptions& options) {
  CORUN_CHECK(options.max_batch >= 1, Status::invalid_argument,
              "--max-batch " << options.max_batch << ": a batch holds at least one row");
  CORUN_CHECK(options.max_queue >= 1, Status::invalid_argument,
              "--max-queue " << options.max_queue << ": at least one request must be able to wait");
  CORUN_CHECK(options.max_queue_delay_us >= 0, Status::invalid_argument,
              "--max-queue-delay-us " << options.max_queue_delay_us << " is negative");
  CORUN_CHECK(options.max_in_flight >= 0, Status::invalid_argument,
              "max_in_flight " << options.max_in_flight << " is negative (0: one runner per engine worker)");
}
}  // namespace

std::unique_ptr<ModelServer> ModelServer::from_onnx(Engine& engine, const std::string& onnx_path,
                                                    const std::string& name, const ServerOptions& options) {
  check_options(options);
  return std::make_unique<ModelServerImpl>(engine, ModelSource::from_onnx(onnx_path, name, options), options);
}

std::unique_ptr<ModelServer> ModelServer::from_graphs(Engine& engine, const std::string& name, GraphBuilder build,
                                                      const ServerOptions& options) {
  check_options(options);
  return std::make_unique<ModelServerImpl>(engine, ModelSource::from_builder(name, std::move(build), options),
                                           options);
}

ModelServer::~ModelServer() = default;

}  // namespace corun::serve
