// The Prometheus text format of the served models' counters (metrics_text.hpp).
#include "serve/http/metrics_text.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>

namespace corun::serve::http {

namespace {

// The upper bounds of ModelCounters::batch_rows_histogram's bins (1, 2, 3-4, 5-8, ... 33-64, more).
const char* const kRowBounds[] = {"1", "2", "4", "8", "16", "32", "64", "+Inf"};

// A sample's value: integers as integers, sums of microseconds with their fraction.
std::string value_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class Exposition {
 public:
  explicit Exposition(const std::vector<ModelSample>& samples) : samples_(samples) {}

  // One family: its HELP and TYPE lines, then one sample per model.
  void family(const std::string& name, const std::string& type, const std::string& help,
              const std::function<double(const ModelCounters&)>& value) {
    header(name, type, help);
    for (const ModelSample& s : samples_) line(name, model_label(s), value(s.counters));
  }

  void requests() {
    header("corun_requests_total", "counter", "Infer requests by outcome: ok, failed (the run threw: 500), "
                                              "rejected (queue full or draining: 503).");
    for (const ModelSample& s : samples_) {
      const ModelCounters& c = s.counters;
      line("corun_requests_total", model_label(s) + ",status=\"ok\"", static_cast<double>(c.requests_ok));
      line("corun_requests_total", model_label(s) + ",status=\"failed\"", static_cast<double>(c.requests_failed));
      line("corun_requests_total", model_label(s) + ",status=\"rejected\"", static_cast<double>(c.requests_rejected));
    }
  }

  // Prometheus buckets are cumulative: bucket le=N counts the batches of at most N rows.
  void batch_rows() {
    header("corun_batch_rows", "histogram", "Rows of the merged batches run (padding excluded).");
    for (const ModelSample& s : samples_) {
      const ModelCounters& c = s.counters;
      uint64_t cumulative = 0;
      for (size_t b = 0; b + 1 < std::size(kRowBounds); ++b) {
        cumulative += b < c.batch_rows_histogram.size() ? c.batch_rows_histogram[b] : 0;
        line("corun_batch_rows_bucket", model_label(s) + ",le=\"" + kRowBounds[b] + "\"",
             static_cast<double>(std::min(cumulative, c.batches)));
      }
      line("corun_batch_rows_bucket", model_label(s) + ",le=\"+Inf\"", static_cast<double>(c.batches));
      line("corun_batch_rows_sum", model_label(s), static_cast<double>(c.batch_rows_total));
      line("corun_batch_rows_count", model_label(s), static_cast<double>(c.batches));
    }
  }

  void co_running() {
    header("corun_co_running_batches", "gauge", "Batches of every served model in flight now.");
    double total = 0;
    for (const ModelSample& s : samples_) total += s.counters.in_flight_batches;
    text_ += "corun_co_running_batches " + value_text(total) + "\n";
  }

  std::string text() const { return text_; }

 private:
  static std::string model_label(const ModelSample& s) { return "model=\"" + escape_label(s.model) + "\""; }

  void header(const std::string& name, const std::string& type, const std::string& help) {
    text_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }

  void line(const std::string& name, const std::string& labels, double v) {
    text_ += name + "{" + labels + "} " + value_text(v) + "\n";
  }

  const std::vector<ModelSample>& samples_;
  std::string text_;
};

}  // namespace

std::string escape_label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string prometheus_text(const std::vector<ModelSample>& samples) {
  Exposition e(samples);
  e.requests();
  e.family("corun_queue_microseconds_total", "counter",
           "Microseconds requests waited in the queue, from arrival to the start of their batch.",
           [](const ModelCounters& c) { return c.queue_us_total; });
  e.family("corun_compute_microseconds_total", "counter",
           "Microseconds of the batches that ran the requests, counted once per request.",
           [](const ModelCounters& c) { return c.compute_us_total; });
  e.family("corun_batches_total", "counter", "Merged batches run.",
           [](const ModelCounters& c) { return static_cast<double>(c.batches); });
  e.batch_rows();
  e.family("corun_queued_requests", "gauge", "Requests waiting in the queue now.",
           [](const ModelCounters& c) { return static_cast<double>(c.queued_requests); });
  e.family("corun_in_flight_batches", "gauge", "Batches of this model running now.",
           [](const ModelCounters& c) { return static_cast<double>(c.in_flight_batches); });
  e.co_running();
  return e.text();
}

}  // namespace corun::serve::http
