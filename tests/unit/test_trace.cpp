// The execution-trace file (trace/trace.hpp): write -> read round trips, the Chrome trace structure
// viewers rely on, the checked-in version-1 fixture, and errors for malformed tasks, unwritable paths and
// corrupt or foreign files.
#include "trace/trace.hpp"

#include "base/json.hpp"

#include "common/error_matchers.hpp"
#include "common/synthetic_trace.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>

#ifndef CORUN_TEST_DATA
#error "CORUN_TEST_DATA must name tests/data"
#endif

namespace {

using corun::Status;
using corun::TraceMeta;
using corun::TraceTask;
namespace fs = std::filesystem;
namespace json = corun::json;

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const std::string& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

// The hand-made trace behind tests/data/trace_v1.json: a team task, NaN estimates, executor -1, two
// iterations, and strings that need escaping.
TraceMeta small_meta() {
  TraceMeta m;
  m.policy = "cpf";
  m.layout = "2x1";
  m.machine = "test machine \"quoted\" \xC3\xA9";
  m.workers = 2;
  m.makespan_us = 100.5;
  m.critical_path_us = 80;
  m.total_work_us = 150.25;
  m.lower_bound_us = 80;
  return m;
}

std::vector<TraceTask> small_tasks() {
  std::vector<TraceTask> t(4);
  t[0] = {"matmul", "l0.t0.gates", 0, {0, 1}, 2, 0.5, 40.75, 39, 80, true, 0, ""};
  t[1] = {"sigmoid", "l0.t0.i", 0, {0}, 1, 41, 45.5, NAN, NAN, false, 0, ""};
  t[2] = {"tanh", "l0.t0.g", 1, {1}, 1, 41.25, 47, 5, 39.5, true, 0, ""};
  t[3] = {"sgd", "w0.sgd", -1, {1}, 1, 90, 100.5, 10.5, 10.5, false, 1, ""};
  return t;
}

// NaN == NaN here: "not computed" must survive the round trip.
void expect_same(double a, double b, const char* what) {
  if (std::isnan(a) || std::isnan(b))
    EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << what << ": " << a << " vs " << b;
  else
    EXPECT_DOUBLE_EQ(a, b) << what;
}

void expect_same(const TraceMeta& a, const TraceMeta& b) {
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.machine, b.machine);
  EXPECT_EQ(a.workers, b.workers);
  expect_same(a.makespan_us, b.makespan_us, "makespan_us");
  expect_same(a.critical_path_us, b.critical_path_us, "critical_path_us");
  expect_same(a.total_work_us, b.total_work_us, "total_work_us");
  expect_same(a.lower_bound_us, b.lower_bound_us, "lower_bound_us");
}

void expect_same(const std::vector<TraceTask>& a, const std::vector<TraceTask>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("task " + std::to_string(i));
    EXPECT_EQ(a[i].op, b[i].op);
    EXPECT_EQ(a[i].node, b[i].node);
    EXPECT_EQ(a[i].executor, b[i].executor);
    EXPECT_EQ(a[i].cores, b[i].cores);
    EXPECT_EQ(a[i].width, b[i].width);
    EXPECT_EQ(a[i].start_us, b[i].start_us);          // written in the shortest exact form
    expect_same(a[i].end_us, b[i].end_us, "end_us");  // start + dur: exact to rounding
    expect_same(a[i].predicted_us, b[i].predicted_us, "predicted_us");
    expect_same(a[i].level_us, b[i].level_us, "level_us");
    EXPECT_EQ(a[i].critical, b[i].critical);
    EXPECT_EQ(a[i].reason, b[i].reason);
    EXPECT_EQ(a[i].iteration, b[i].iteration);
  }
}

class Trace : public corun::testing::TempDirTest {
 protected:
  Trace() : TempDirTest("trace") {}
};

TEST_F(Trace, RoundTripSmall) {
  const std::string p = path("t.json");
  corun::write_chrome_trace(p, small_meta(), small_tasks());
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file left beside it
    EXPECT_EQ(e.path().filename().string(), "t.json");
  const corun::TraceFile back = corun::read_chrome_trace(p);
  expect_same(back.meta, small_meta());
  expect_same(back.tasks, small_tasks());
}

TEST_F(Trace, CorunReasonsRoundTripAndAreOptional) {
  // The fixture of version 1 has no reasons (cpf); the corun policy's are written and read back verbatim.
  auto tasks = small_tasks();
  tasks[0].reason = "co-run limit=12: w2=39 ok; narrowest ok w2";
  tasks[3].reason = "fallback \"quoted\"";
  const std::string p = path("r.json");
  corun::write_chrome_trace(p, small_meta(), tasks);
  const corun::TraceFile back = corun::read_chrome_trace(p);
  expect_same(back.tasks, tasks);
  EXPECT_EQ(back.tasks[1].reason, "");
}

TEST_F(Trace, RoundTripSynthetic) {
  corun::testing::SyntheticTraceConfig cfg;
  cfg.workers = 3;
  cfg.iterations = 2;
  const auto t = corun::testing::synthetic_lstm_trace(cfg);
  int teams = 0;
  for (const auto& task : t.tasks) teams += task.width > 1;
  ASSERT_GT(teams, 0) << "the synthetic trace should contain team tasks";
  const std::string p = path("syn.json");
  corun::write_chrome_trace(p, t.meta, t.tasks);
  const corun::TraceFile back = corun::read_chrome_trace(p);
  expect_same(back.meta, t.meta);
  expect_same(back.tasks, t.tasks);
}

TEST_F(Trace, EmptyTraceRoundTrips) {
  TraceMeta m;
  const std::string p = path("empty.json");
  corun::write_chrome_trace(p, m, {});
  const corun::TraceFile back = corun::read_chrome_trace(p);
  expect_same(back.meta, m);
  EXPECT_TRUE(back.tasks.empty());
}

// What Perfetto and chrome://tracing read: named worker tracks, one complete event per team member,
// critical events in their own category with a colour, times in µs.
TEST_F(Trace, ChromeTraceStructure) {
  const std::string p = path("t.json");
  corun::write_chrome_trace(p, small_meta(), small_tasks());
  const json::Value doc = json::parse_file(p);
  EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
  std::map<long, std::string> thread_names;
  std::string process_name;
  std::vector<const json::Value*> slices;
  for (const json::Value& e : doc.at("traceEvents")) {
    const std::string& ph = e.at("ph").get_ref<const std::string&>();
    EXPECT_EQ(e.at("pid"), 1);
    if (ph == "M" && e.at("name") == "thread_name") thread_names[e.at("tid").get<long>()] = e.at("args").at("name");
    if (ph == "M" && e.at("name") == "process_name") process_name = e.at("args").at("name");
    if (ph == "X") slices.push_back(&e);
  }
  EXPECT_EQ(thread_names, (std::map<long, std::string>{{0, "worker 0"}, {1, "worker 1"}}));
  EXPECT_EQ(process_name, "corun cpf 2x1");
  ASSERT_EQ(slices.size(), 5u);  // 4 tasks, the first on two cores
  // The team task: the same slice on both of its workers' tracks.
  for (int r = 0; r < 2; ++r) {
    const json::Value& s = *slices[static_cast<size_t>(r)];
    EXPECT_EQ(s.at("name"), "matmul");
    EXPECT_EQ(s.at("tid"), r);
    EXPECT_EQ(s.at("ts"), 0.5);
    EXPECT_EQ(s.at("dur"), 40.25);
    EXPECT_EQ(s.at("cat"), "critical");
    EXPECT_EQ(s.at("cname"), "terrible");
    const json::Value& a = s.at("args");
    EXPECT_EQ(a.at("team_rank"), r);
    EXPECT_EQ(a.at("node"), "l0.t0.gates");
    EXPECT_EQ(a.at("width"), 2);
    EXPECT_EQ(a.at("cores").size(), 2u);
    EXPECT_EQ(a.at("predicted_us"), 39);
    EXPECT_EQ(a.at("actual_us"), 40.25);
    EXPECT_EQ(a.at("level_us"), 80);
    EXPECT_EQ(a.at("critical"), true);
  }
  const json::Value& plain = *slices[2];
  EXPECT_EQ(plain.at("cat"), "task");
  EXPECT_FALSE(plain.contains("cname"));
  EXPECT_TRUE(plain.at("args").at("predicted_us").is_null());  // NaN: not estimated
  const json::Value& other = doc.at("otherData");
  EXPECT_EQ(other.at("format"), "corun-trace");
  EXPECT_EQ(other.at("version"), 1);
  EXPECT_EQ(other.at("tasks"), 4);
  EXPECT_EQ(other.at("lower_bound_us"), 80);
}

// The checked-in file pins format version 1: the writer must produce it byte for byte, and the reader must
// keep reading it. A deliberate format change bumps the version and replaces the fixture.
TEST_F(Trace, Version1Fixture) {
  const std::string fixture = std::string(CORUN_TEST_DATA) + "/trace_v1.json";
  const std::string p = path("t.json");
  corun::write_chrome_trace(p, small_meta(), small_tasks());
  ASSERT_EQ(slurp(p), slurp(fixture)) << "the writer's output changed (new output: " << p
                                      << "); if on purpose, bump the format version and replace the fixture";
  const corun::TraceFile f = corun::read_chrome_trace(fixture);
  expect_same(f.meta, small_meta());
  expect_same(f.tasks, small_tasks());
}

TEST_F(Trace, MalformedTasksAreRejectedAndNothingIsWritten) {
  const std::string p = path("t.json");
  struct Case {
    const char* what;
    std::function<void(TraceTask&)> edit;
    const char* message;
  };
  const Case cases[] = {
      {"no cores", [](TraceTask& t) { t.cores.clear(); }, "no cores"},
      {"width", [](TraceTask& t) { t.width = 3; }, "width 3 but 2 cores"},
      {"core range",
       [](TraceTask& t) {
         t.cores = {0, 2};
       },
       "core 2 is outside [0, 2)"},
      {"negative core",
       [](TraceTask& t) {
         t.cores = {-1, 0};
       },
       "core -1 is outside [0, 2)"},
      {"duplicate",
       [](TraceTask& t) {
         t.cores = {1, 1};
       },
       "core 1 listed twice"},
      {"reversed", [](TraceTask& t) { t.end_us = 0.25; }, "must be finite with end >= start"},
      {"nan", [](TraceTask& t) { t.start_us = NAN; }, "must be finite with end >= start"},
      {"empty op", [](TraceTask& t) { t.op.clear(); }, "empty op name"},
      {"executor", [](TraceTask& t) { t.executor = -2; }, "executor -2 < -1"},
      {"iteration", [](TraceTask& t) { t.iteration = -1; }, "iteration -1 < 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto tasks = small_tasks();
    c.edit(tasks[0]);
    EXPECT_CORUN_ERROR(corun::write_chrome_trace(p, small_meta(), tasks), Status::invalid_argument,
                       "trace task 0 (op '" + tasks[0].op + "', node 'l0.t0.gates')", c.message);
    EXPECT_FALSE(fs::exists(p));
    EXPECT_FALSE(fs::exists(p + ".tmp"));
  }
  TraceMeta m = small_meta();
  m.makespan_us = NAN;
  EXPECT_CORUN_ERROR(corun::write_chrome_trace(p, m, small_tasks()), Status::invalid_argument, "makespan_us");
}

TEST_F(Trace, UnwritablePathNamesItAndKeepsTheOldFile) {
  const std::string missing_dir = path("no/such/dir/t.json");
  EXPECT_CORUN_ERROR(corun::write_chrome_trace(missing_dir, small_meta(), small_tasks()), Status::io_error,
                     "cannot write trace '" + missing_dir + "'", "No such file or directory");
  // The target is a directory: the temporary file is written, the rename fails, and it is cleaned up.
  fs::create_directories(path("adir"));
  EXPECT_CORUN_ERROR(corun::write_chrome_trace(path("adir"), small_meta(), small_tasks()), Status::io_error,
                     "cannot write trace '" + path("adir") + "'");
  EXPECT_FALSE(fs::exists(path("adir.tmp")));
  // A failed write leaves an existing trace untouched.
  const std::string p = path("t.json");
  corun::write_chrome_trace(p, small_meta(), small_tasks());
  const std::string before = slurp(p);
  auto bad = small_tasks();
  bad[1].cores = {5};
  EXPECT_THROW(corun::write_chrome_trace(p, small_meta(), bad), corun::Error);
  EXPECT_EQ(slurp(p), before);
}

TEST_F(Trace, ReadErrorsNameTheFileAndTheProblem) {
  const std::string good = path("good.json");
  corun::write_chrome_trace(good, small_meta(), small_tasks());
  const std::string text = slurp(good);
  const std::string p = path("bad.json");
  auto expect_read_error = [&](const std::string& contents, std::initializer_list<std::string> parts) {
    spit(p, contents);
    const std::string msg = corun::testing::error_message([&] { corun::read_chrome_trace(p); }, Status::io_error);
    corun::testing::expect_contains(msg, {"'" + p + "'"});
    corun::testing::expect_contains(msg, parts);
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.substr(0, at) + to + text.substr(at + from.size());
  };

  EXPECT_CORUN_ERROR(corun::read_chrome_trace(path("missing.json")), Status::io_error,
                     "cannot read '" + path("missing.json") + "'");
  expect_read_error("", {"invalid JSON", "the text is empty"});
  expect_read_error(text.substr(0, text.size() / 2), {"invalid JSON at line"});  // truncated
  expect_read_error("garbage", {"invalid JSON at line 1, column 1"});
  expect_read_error(R"([{"name":"x","ph":"X","ts":0,"dur":1,"pid":1,"tid":1}])", {"bare-array form"});
  expect_read_error(R"({"a":1})", {"is not a Chrome trace", "traceEvents"});
  expect_read_error(R"({"traceEvents":[]})", {"not one corun wrote"});
  expect_read_error(R"({"traceEvents":[],"otherData":{"format":"other"}})", {"not one corun wrote"});
  // A foreign trace's events do not look like ours either: the file is named for what it is.
  expect_read_error(R"({"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":1}]})",
                    {"not one corun wrote"});
  expect_read_error(R"({"traceEvents":{},"otherData":{"format":"corun-trace","version":1}})",
                    {"traceEvents must be an array, not an object"});
  expect_read_error(replaced("\"version\":1", "\"version\":2"), {"format version 2", "reads version 1"});
  expect_read_error(replaced("\"ts\":0.5", "\"ts\":\"0.5\""), {"traceEvents[5].ts must be a number, not a string"});
  expect_read_error(replaced("\"node\":\"l0.t0.i\",", ""), {"traceEvents[7].args has no 'node'"});
  expect_read_error(replaced("\"width\":2", "\"width\":0"), {"traceEvents[5].args.width must be an integer in [1, "});
  expect_read_error(replaced("\"cores\":[0,1],\"team_rank\":0", "\"cores\":[0,7],\"team_rank\":0"),
                    {"traceEvents[5].args.cores[1] is 7, but otherData.workers is 2"});
  expect_read_error(replaced("\"tid\":0,\"ts\":0.5", "\"tid\":1,\"ts\":0.5"), {"traceEvents[5]: tid 1 is not core 0"});
  expect_read_error(replaced("\"critical\":false", "\"critical\":0"),
                    {"args.critical must be a boolean, not a number"});
  expect_read_error(replaced("\"tasks\":4", "\"tasks\":5"), {"lists 4 tasks but otherData.tasks says 5"});
  expect_read_error(replaced("\"op\":\"tanh\"", "\"op\":\"relu\""),
                    {"args.op 'relu' differs from the event name 'tanh'"});
  expect_read_error(replaced("\"workers\":2", "\"workers\":-1"), {"otherData.workers must be an integer in [0, "});
  expect_read_error(replaced("\"makespan_us\":100.5", "\"makespan_us\":null"),
                    {"otherData.makespan_us must be a number, not null"});
  // A team-member slice dropped (the second slice of the width-2 task): its copies no longer add up.
  const size_t first = text.find("{\"name\":\"matmul\"");
  const size_t second = text.find("{\"name\":\"matmul\"", first + 1);
  const size_t end = text.find('\n', second);
  ASSERT_NE(second, std::string::npos);
  expect_read_error(text.substr(0, second) + text.substr(end + 1), {"0 team-member slices", "need 1"});
}

TEST_F(Trace, ForeignEventPhasesAreIgnored) {
  const std::string p = path("t.json");
  corun::write_chrome_trace(p, small_meta(), small_tasks());
  std::string text = slurp(p);
  const std::string counter = "{\"name\":\"ready\",\"ph\":\"C\",\"pid\":1,\"ts\":3,\"args\":{\"n\":4}},\n";
  text.insert(text.find("{\"name\":\"process_name\""), counter);
  spit(p, text);
  expect_same(corun::read_chrome_trace(p).tasks, small_tasks());
}

}  // namespace
