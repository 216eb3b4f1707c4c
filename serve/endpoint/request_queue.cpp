#include "serve/endpoint/request_queue.hpp"

#include <utility>

namespace corun::serve {

RequestQueue::RequestQueue(const QueueLimits& limits, std::function<bool()> machine_busy)
    : limits_(limits), machine_busy_(std::move(machine_busy)) {}

std::future<InferResult> RequestQueue::push(PendingRequest request) {
  std::future<InferResult> future = request.result.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) throw Overloaded("the server is shutting down (draining the requests in flight)", 5);
    const size_t waiting = urgent_.size() + normal_.size();
    if (waiting >= static_cast<size_t>(limits_.max_queue))
      throw Overloaded("the queue of this model is full (" + std::to_string(limits_.max_queue) +
                           " requests wait; --max-queue sets it): retry later",
                       1);
    request.queued_at = Clock::now();
    (request.priority ? urgent_ : normal_).push_back(std::move(request));
  }
  cv_.notify_all();
  return future;
}

std::deque<PendingRequest>& RequestQueue::next_queue() { return urgent_.empty() ? normal_ : urgent_; }

bool RequestQueue::fill(Batch& batch) {
  while (!urgent_.empty() || !normal_.empty()) {
    std::deque<PendingRequest>& q = next_queue();
    if (batch.rows + q.front().rows > limits_.max_rows) return true;
    batch.rows += q.front().rows;
    batch.priority = batch.priority || q.front().priority;
    batch.requests.push_back(std::move(q.front()));
    q.pop_front();
  }
  return batch.rows >= limits_.max_rows;
}

std::optional<Batch> RequestQueue::take() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return closed_ || !urgent_.empty() || !normal_.empty(); });
  if (urgent_.empty() && normal_.empty()) return std::nullopt;  // closed and drained
  Batch batch;
  const Clock::time_point deadline = next_queue().front().queued_at + limits_.max_delay;
  bool full = fill(batch);
  // Wait for more rows only while other batches keep the cores busy: then this one would wait for cores anyway.
  while (!full && !closed_ && machine_busy_() && Clock::now() < deadline) {
    cv_.wait_until(lock, deadline);
    full = fill(batch);
  }
  return batch;
}

void RequestQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

int RequestQueue::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(urgent_.size() + normal_.size());
}

bool RequestQueue::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !closed_ && urgent_.empty() && normal_.empty();
}

}  // namespace corun::serve
