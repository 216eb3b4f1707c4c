// serve/endpoint/request_queue.hpp — the bounded queue of one served model and its dynamic batching: runners
// take the waiting requests merged into batches of at most max_rows rows, priority requests first, each in
// arrival order. Plain C++ (no engine): tests/serve_endpoint checks it alone.
#pragma once

#include "serve/endpoint/model_backend.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <vector>

namespace corun::serve {

using Clock = std::chrono::steady_clock;

/// One request waiting for its batch.
struct PendingRequest {
  std::vector<RequestTensor> inputs;
  int rows = 0;
  bool priority = false;
  Clock::time_point queued_at;
  std::promise<InferResult> result;
};

/// The requests one runner takes and runs as one graph run.
struct Batch {
  std::vector<PendingRequest> requests;
  int rows = 0;
  bool priority = false;  ///< any request in it asked for priority
};

struct QueueLimits {
  int max_rows = 8;                                 ///< rows of one batch
  int max_queue = 256;                              ///< requests waiting; one more is refused
  std::chrono::microseconds max_delay{500};         ///< how long a batch waits for more rows
};

class RequestQueue {
 public:
  /// `machine_busy`: whether other batches run now. A batch waits up to max_delay for more rows only then:
  /// on an idle machine the first request runs at once, with every core (no latency added at low load).
  RequestQueue(const QueueLimits& limits, std::function<bool()> machine_busy);

  /// Queues `request` (rows checked by the caller: 1 <= rows <= max_rows) and returns its future. Throws
  /// Overloaded when max_queue requests wait or the queue is closed.
  std::future<InferResult> push(PendingRequest request);

  /// The next batch: blocks until a request waits, then merges the waiting ones (priority first, each in
  /// arrival order) up to max_rows, waiting up to max_delay after the first one's arrival for more while
  /// the machine is busy. Empty once the queue is closed and empty.
  std::optional<Batch> take();

  /// No more requests (push throws Overloaded "draining"); take() hands out what waits, then returns empty.
  void close();
  int waiting() const;
  /// Nothing waits and the queue is open: a runner may spend the moment on preparation.
  bool idle() const;

 private:
  bool fill(Batch& batch);  // moves waiting requests into `batch` while they fit; true when it is full
  std::deque<PendingRequest>& next_queue();

  QueueLimits limits_;
  std::function<bool()> machine_busy_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PendingRequest> urgent_, normal_;
  bool closed_ = false;
};

}  // namespace corun::serve
