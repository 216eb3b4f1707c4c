// Chrome Trace Event writer and reader for corun's execution timelines (format: docs/traces.md).
//
// A team task is written once per member core ("team_rank" 0..width-1, same ts/dur/args), not once on its
// first core: Perfetto and chrome://tracing draw one track per tid and know nothing of teams, so only a
// slice on every member's track shows that worker as busy. With one slice per task, a width-4 team would
// look like one busy worker and three idle ones, which is exactly the misreading a timeline must not
// invite. The reader keeps the rank-0 slice as the task and checks that the copies add up.
#include "trace/trace.hpp"

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"

#include <cmath>
#include <limits>
#include <set>

namespace corun {

namespace {

constexpr const char* kFormat = "corun-trace";
constexpr int kVersion = 1;
constexpr int kPid = 1;
// chrome://tracing's reserved colour for critical-path slices (Perfetto ignores "cname" and colours by
// name; there the category "critical" and args.critical mark them).
constexpr const char* kCriticalColour = "terrible";

// A time a trace may hold: 1e15 us is 31 years. 1e308 passes as a JSON number but adds up to inf, which
// plot-trace drew as "inf% busy"; a negative one draws before the run started.
constexpr double kMaxTraceUs = 1e15;

double plausible_us(double us, const std::string& what) {
  CORUN_CHECK(us >= 0 && us <= kMaxTraceUs, Status::io_error,
              what << " is " << us << ": a trace's times are microseconds from 0 to 1e15 (31 years); "
                   << "the file is damaged or was not written by corun");
  return us;
}

std::string describe(const TraceTask& t, size_t i) {
  return "trace task " + std::to_string(i) + " (op '" + t.op + "', node '" + t.node + "')";
}

void validate(const TraceMeta& meta, const std::vector<TraceTask>& tasks) {
  CORUN_CHECK(meta.workers >= 0, Status::invalid_argument, "trace meta: workers must be >= 0, got " << meta.workers);
  CORUN_CHECK(std::isfinite(meta.makespan_us) && meta.makespan_us >= 0, Status::invalid_argument,
              "trace meta: makespan_us must be finite and >= 0, got " << meta.makespan_us);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TraceTask& t = tasks[i];
    CORUN_CHECK(!t.op.empty(), Status::invalid_argument, describe(t, i) << ": empty op name");
    CORUN_CHECK(!t.cores.empty(), Status::invalid_argument, describe(t, i) << ": no cores (the workers that ran it)");
    CORUN_CHECK(t.width == static_cast<int>(t.cores.size()), Status::invalid_argument,
                describe(t, i) << ": width " << t.width << " but " << t.cores.size() << " cores");
    std::set<int> seen;
    for (int c : t.cores) {
      CORUN_CHECK(c >= 0 && c < meta.workers, Status::invalid_argument,
                  describe(t, i) << ": core " << c << " is outside [0, " << meta.workers << ") (meta.workers)");
      CORUN_CHECK(seen.insert(c).second, Status::invalid_argument, describe(t, i) << ": core " << c << " listed twice");
    }
    CORUN_CHECK(std::isfinite(t.start_us) && std::isfinite(t.end_us) && t.end_us >= t.start_us,
                Status::invalid_argument,
                describe(t, i) << ": start_us " << t.start_us << " and end_us " << t.end_us
                               << " must be finite with end >= start");
    CORUN_CHECK(t.executor >= -1, Status::invalid_argument, describe(t, i) << ": executor " << t.executor << " < -1");
    CORUN_CHECK(t.iteration >= 0, Status::invalid_argument, describe(t, i) << ": iteration " << t.iteration << " < 0");
  }
}

json::Value task_event(const TraceTask& t, int rank) {
  json::Value e = {{"name", t.op}};
  e["cat"] = t.critical ? "critical" : "task";
  if (t.critical) e["cname"] = kCriticalColour;
  e["ph"] = "X";
  e["pid"] = kPid;
  e["tid"] = t.cores[static_cast<size_t>(rank)];
  e["ts"] = json::number(t.start_us);
  e["dur"] = json::number(t.end_us - t.start_us);
  json::Value args = {{"node", t.node},
                      {"op", t.op},
                      {"width", t.width},
                      {"cores", t.cores},
                      {"team_rank", rank},
                      {"executor", t.executor},
                      {"iteration", t.iteration},
                      {"predicted_us", json::number(t.predicted_us)},
                      {"actual_us", json::number(t.end_us - t.start_us)},
                      {"level_us", json::number(t.level_us)},
                      {"critical", t.critical}};
  if (!t.reason.empty()) args["reason"] = t.reason;
  e["args"] = std::move(args);
  return e;
}

json::Value metadata_event(const char* name, int tid, json::Value args) {
  return {{"name", name}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

// Times go through json::number: the text of a trace is pinned (tests/data/trace_v1.json), and 12 must stay
// "12". One event per line, each dumped on its own: a trace of 100,000 tasks is never one document in memory
// (the text is a third of the size), and a person or a diff reads it line by line.
std::string render(const TraceMeta& meta, const std::vector<TraceTask>& tasks) {
  std::string out;
  out.reserve(256 + 64 * static_cast<size_t>(meta.workers) + 330 * tasks.size());
  std::string process = "corun";
  if (!meta.policy.empty()) process += " " + meta.policy;
  if (!meta.layout.empty()) process += " " + meta.layout;
  out += "{\"traceEvents\":[\n";
  out += json::dump(metadata_event("process_name", 0, {{"name", process}}));
  for (int w = 0; w < meta.workers; ++w) {
    out += ",\n" + json::dump(metadata_event("thread_name", w, {{"name", "worker " + std::to_string(w)}}));
    out += ",\n" + json::dump(metadata_event("thread_sort_index", w, {{"sort_index", w}}));
  }
  for (const TraceTask& t : tasks)
    for (int r = 0; r < t.width; ++r) out += ",\n" + json::dump(task_event(t, r));
  const json::Value other = {{"format", kFormat},
                             {"version", kVersion},
                             {"policy", meta.policy},
                             {"layout", meta.layout},
                             {"machine", meta.machine},
                             {"workers", meta.workers},
                             {"tasks", tasks.size()},
                             {"makespan_us", json::number(meta.makespan_us)},
                             {"critical_path_us", json::number(meta.critical_path_us)},
                             {"total_work_us", json::number(meta.total_work_us)},
                             {"lower_bound_us", json::number(meta.lower_bound_us)}};
  out += "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" + json::dump(other) + "}\n";
  return out;
}

}  // namespace

void write_chrome_trace(const std::string& path, const TraceMeta& meta, const std::vector<TraceTask>& tasks) {
  validate(meta, tasks);
  write_file_atomically(path, render(meta, tasks), "trace");
}

// ---------------------------------------------------------------------------------------------- reading

namespace {

// A number or null (NaN).
double optional_number(const json::Node& n) {
  return n.value().is_null() ? NAN : n.number();
}

// The trace's events as the parser reaches them: a task per team (its rank-0 slice), the other members'
// slices counted against the teams' widths, and the highest core, checked against otherData.workers once
// that is read. The first error is held back until the file is known to be a corun trace.
struct EventReader {
  const std::string& file;
  std::vector<TraceTask>& tasks;
  long copies = 0, copies_needed = 0;
  int max_core = -1;
  size_t max_core_event = 0, max_core_index = 0;
  std::string error;

  EventReader(const std::string& file_name, std::vector<TraceTask>& out) : file(file_name), tasks(out) {}

  void read(size_t i, const json::Value& item) {
    if (!error.empty()) return;
    try {
      read_event(i, item);
    } catch (const Error& err) {
      error = err.what();
    }
  }

  void read_event(size_t i, const json::Value& item) {
    const json::Node e(item, file + ": traceEvents[" + std::to_string(i) + "]");
    e.members();  // an object
    const std::string& ph = e.at("ph").string();
    if (ph != "X") return;  // metadata ("M"), and room for later additions such as counters
    const json::Node args = e.at("args");
    TraceTask t;
    t.op = e.at("name").string();
    t.node = args.at("node").string();
    const std::string& op = args.at("op").string();
    CORUN_CHECK(op == t.op, Status::io_error,
                args.name() << ".op '" << op << "' differs from the event name '" << t.op << "'");
    t.width = static_cast<int>(args.at("width").integer(1, 1 << 20));
    const std::vector<json::Node> cores = args.at("cores").items();
    for (size_t c = 0; c < cores.size(); ++c) {
      t.cores.push_back(static_cast<int>(cores[c].integer(0, std::numeric_limits<int>::max())));
      if (t.cores.back() > max_core) {
        max_core = t.cores.back();
        max_core_event = i;
        max_core_index = c;
      }
    }
    CORUN_CHECK(static_cast<int>(t.cores.size()) == t.width, Status::io_error,
                args.name() << ": width " << t.width << " but " << t.cores.size() << " cores");
    const int rank = static_cast<int>(args.at("team_rank").integer(0, t.width - 1));
    const long tid = e.at("tid").integer(0, std::numeric_limits<int>::max());
    CORUN_CHECK(tid == t.cores[static_cast<size_t>(rank)], Status::io_error,
                e.name() << ": tid " << tid << " is not core " << t.cores[static_cast<size_t>(rank)]
                         << " (cores[team_rank])");
    if (rank > 0) {
      ++copies;
      return;
    }
    copies_needed += t.width - 1;
    t.executor = static_cast<int>(args.at("executor").integer(-1, std::numeric_limits<int>::max()));
    t.iteration = static_cast<int>(args.at("iteration").integer(0, std::numeric_limits<int>::max()));
    t.start_us = plausible_us(e.at("ts").number(), e.name() + ".ts");
    t.end_us = t.start_us + plausible_us(e.at("dur").number(), e.name() + ".dur");
    t.predicted_us = optional_number(args.at("predicted_us"));
    t.level_us = optional_number(args.at("level_us"));
    t.critical = args.at("critical").boolean();
    if (const auto r = args.find("reason")) t.reason = r->string();  // optional
    tasks.push_back(std::move(t));
  }
};

// The file's otherData, once the document is known to be a corun trace of this version.
json::Node corun_other_data(const json::Value& doc, const std::string& file) {
  CORUN_CHECK(!doc.is_array(), Status::io_error,
              file << " is a Chrome trace in the bare-array form, not a corun trace (those are an object with "
                      "\"traceEvents\" and \"otherData\")");
  CORUN_CHECK(doc.is_object() && doc.contains("traceEvents"), Status::io_error,
              file << " is not a Chrome trace: expected a JSON object with a \"traceEvents\" array");
  const json::Value* other = doc.contains("otherData") ? &doc.at("otherData") : nullptr;
  const json::Value* format = other != nullptr && other->contains("format") ? &other->at("format") : nullptr;
  CORUN_CHECK(format != nullptr && *format == kFormat, Status::io_error,
              file << " is a Chrome trace but not one corun wrote (otherData.format is not \"" << kFormat << "\")");
  json::Node od(*other, file + ": otherData");
  const long version = od.at("version").integer(1, std::numeric_limits<int>::max());
  CORUN_CHECK(version == kVersion, Status::io_error,
              file << " is a corun trace of format version " << version << "; this corun reads version " << kVersion);
  return od;
}

TraceMeta read_meta(const json::Node& od, const std::string& file) {
  TraceMeta m;
  m.policy = od.at("policy").string();
  m.layout = od.at("layout").string();
  m.machine = od.at("machine").string();
  m.workers = static_cast<int>(od.at("workers").integer(0, 1 << 20));
  m.makespan_us = plausible_us(od.at("makespan_us").number(), file + ": otherData.makespan_us");
  m.critical_path_us = optional_number(od.at("critical_path_us"));
  m.total_work_us = optional_number(od.at("total_work_us"));
  m.lower_bound_us = optional_number(od.at("lower_bound_us"));
  return m;
}

}  // namespace

TraceFile read_chrome_trace(const std::string& path) {
  const std::string file = "'" + path + "'";
  // Events are read one at a time as the parser reaches them (a trace of 100,000 tasks as a tree would
  // take gigabytes). They come before otherData in the file, so an event error is held back until the
  // file is known to be a corun trace (a foreign file gets "not one corun wrote", not an event complaint),
  // and the cores are checked against otherData.workers afterwards.
  TraceFile tf;
  EventReader events(file, tf.tasks);
  const json::Value doc = json::parse_file_streaming(
      path, "traceEvents", [&](size_t i, const json::Value& item) { events.read(i, item); });
  const json::Node od = corun_other_data(doc, file);
  json::Node(doc.at("traceEvents"), file + ": traceEvents").items();  // an array
  if (!events.error.empty()) throw Error(Status::io_error, events.error);

  tf.meta = read_meta(od, file);
  const TraceMeta& m = tf.meta;
  const long expected_tasks = od.at("tasks").integer(0, std::numeric_limits<long>::max());
  CORUN_CHECK(events.max_core < m.workers, Status::io_error,
              file << ": traceEvents[" << events.max_core_event << "].args.cores[" << events.max_core_index << "] is "
                   << events.max_core << ", but otherData.workers is " << m.workers);
  CORUN_CHECK(static_cast<long>(tf.tasks.size()) == expected_tasks, Status::io_error,
              file << " lists " << tf.tasks.size() << " tasks but otherData.tasks says " << expected_tasks
                   << " (truncated or edited?)");
  CORUN_CHECK(events.copies == events.copies_needed, Status::io_error,
              file << " has " << events.copies << " team-member slices (team_rank > 0) but its team tasks need "
                   << events.copies_needed);
  return tf;
}

}  // namespace corun
