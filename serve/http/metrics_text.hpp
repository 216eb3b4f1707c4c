// serve/http/metrics_text.hpp — GET /metrics: the served models' counters in Prometheus's text exposition
// format (version 0.0.4): one HELP and one TYPE line per metric family, then its samples with a `model` label.
//
//   corun_requests_total{model="resnet18",status="ok"} 1520
//   corun_batch_rows_bucket{model="resnet18",le="4"} 310
//   corun_co_running_batches 2
#pragma once

#include "serve/endpoint/model_backend.hpp"

#include <string>
#include <vector>

namespace corun::serve::http {

/// One served model's counters, read once for a scrape.
struct ModelSample {
  std::string model;
  ModelCounters counters;
};

/// The Content-Type of the text below.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

/// The exposition of every model's counters, plus corun_co_running_batches: the batches of all models in
/// flight now (their in_flight_batches summed).
std::string prometheus_text(const std::vector<ModelSample>& samples);

/// A label value escaped as the format wants (backslash, double quote and newline).
std::string escape_label(const std::string& value);

}  // namespace corun::serve::http
