// The Prometheus text of the served models' counters (serve/http/metrics_text.hpp): valid 0.0.4 exposition.
#include "serve/http/metrics_text.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <regex>
#include <sstream>

using namespace corun::serve;
using namespace corun::serve::http;

namespace {

std::vector<ModelSample> samples() {
  ModelCounters a;
  a.requests_ok = 10;
  a.requests_failed = 1;
  a.requests_rejected = 2;
  a.queue_us_total = 1500.25;
  a.compute_us_total = 9000;
  a.batches = 6;
  a.batch_rows_total = 11;
  a.batch_rows_histogram = {3, 1, 1, 1, 0, 0, 0, 0};
  a.queued_requests = 4;
  a.in_flight_batches = 2;
  ModelCounters b;
  b.in_flight_batches = 1;
  return {{"resnet18", a}, {"odd\"name\\", b}};
}

}  // namespace

TEST(HttpMetrics, EveryFamilyHasHelpAndTypeBeforeItsSamples) {
  const std::string text = prometheus_text(samples());
  const std::regex sample(R"(^([a-z_]+)(\{[^}]*\})? [0-9.e+-]+$)");
  std::map<std::string, std::string> types;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << line;
      types[name] = type;
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, m, sample)) << line;
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!types.count(family) && family.size() > std::strlen(suffix) &&
          family.compare(family.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
        family = family.substr(0, family.size() - std::strlen(suffix));
    EXPECT_TRUE(types.count(family)) << "no TYPE line before " << line;
  }
  EXPECT_EQ(types["corun_requests_total"], "counter");
  EXPECT_EQ(types["corun_batch_rows"], "histogram");
}

TEST(HttpMetrics, ValuesAndCumulativeBuckets) {
  const std::string text = prometheus_text(samples());
  for (const char* expected : {
           "corun_requests_total{model=\"resnet18\",status=\"ok\"} 10\n",
           "corun_requests_total{model=\"resnet18\",status=\"rejected\"} 2\n",
           "corun_queue_microseconds_total{model=\"resnet18\"} 1500.25\n",
           "corun_batch_rows_bucket{model=\"resnet18\",le=\"1\"} 3\n",
           "corun_batch_rows_bucket{model=\"resnet18\",le=\"4\"} 5\n",
           "corun_batch_rows_bucket{model=\"resnet18\",le=\"64\"} 6\n",
           "corun_batch_rows_bucket{model=\"resnet18\",le=\"+Inf\"} 6\n",
           "corun_batch_rows_sum{model=\"resnet18\"} 11\n",
           "corun_batch_rows_count{model=\"resnet18\"} 6\n",
           "corun_queued_requests{model=\"resnet18\"} 4\n",
           "corun_in_flight_batches{model=\"odd\\\"name\\\\\"} 1\n",
           "corun_co_running_batches 3\n",
       })
    EXPECT_NE(text.find(expected), std::string::npos) << expected << " not in\n" << text;
}
