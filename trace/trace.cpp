// Chrome Trace Event writer and reader for corun's execution timelines (format: docs/traces.md).
//
// A team task is written once per member core ("team_rank" 0..width-1, same ts/dur/args), not once on its
// first core: Perfetto and chrome://tracing draw one track per tid and know nothing of teams, so only a
// slice on every member's track shows that worker as busy. With one slice per task, a width-4 team would
// look like one busy worker and three idle ones, which is exactly the misreading a timeline must not
// invite. The reader keeps the rank-0 slice as the task and checks that the copies add up.
#include "trace/trace.hpp"

#include "base/check.hpp"
#include "base/json.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

void key(std::string& out, const char* k) {
  out += '"';
  out += k;
  out += "\":";
}

void append_task(std::string& out, const TraceTask& t, int rank) {
  out += "{\"name\":";
  json::append_string(out, t.op);
  out += t.critical ? ",\"cat\":\"critical\",\"cname\":\"" + std::string(kCriticalColour) + "\"" : ",\"cat\":\"task\"";
  out += ",\"ph\":\"X\",\"pid\":" + std::to_string(kPid) +
         ",\"tid\":" + std::to_string(t.cores[static_cast<size_t>(rank)]);
  out += ",\"ts\":";
  json::append_number(out, t.start_us);
  out += ",\"dur\":";
  json::append_number(out, t.end_us - t.start_us);
  out += ",\"args\":{";
  key(out, "node");
  json::append_string(out, t.node);
  out += ',';
  key(out, "op");
  json::append_string(out, t.op);
  out += ",\"width\":" + std::to_string(t.width) + ",\"cores\":[";
  for (size_t c = 0; c < t.cores.size(); ++c) out += (c ? "," : "") + std::to_string(t.cores[c]);
  out += "],\"team_rank\":" + std::to_string(rank) + ",\"executor\":" + std::to_string(t.executor) +
         ",\"iteration\":" + std::to_string(t.iteration) + ",\"predicted_us\":";
  json::append_number(out, t.predicted_us);
  out += ",\"actual_us\":";
  json::append_number(out, t.end_us - t.start_us);
  out += ",\"level_us\":";
  json::append_number(out, t.level_us);
  out += t.critical ? ",\"critical\":true" : ",\"critical\":false";
  if (!t.reason.empty()) {
    out += ',';
    key(out, "reason");
    json::append_string(out, t.reason);
  }
  out += "}}";
}

std::string render(const TraceMeta& meta, const std::vector<TraceTask>& tasks) {
  std::string out;
  out.reserve(256 + 64 * static_cast<size_t>(meta.workers) + 330 * tasks.size());
  out += "{\"traceEvents\":[\n";
  std::string process = "corun";
  if (!meta.policy.empty()) process += " " + meta.policy;
  if (!meta.layout.empty()) process += " " + meta.layout;
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(kPid) + ",\"tid\":0,\"args\":{\"name\":";
  json::append_string(out, process);
  out += "}}";
  for (int w = 0; w < meta.workers; ++w) {
    const std::string tid = std::to_string(w);
    out += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(kPid) + ",\"tid\":" + tid +
           ",\"args\":{\"name\":\"worker " + tid + "\"}}";
    out += ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(kPid) + ",\"tid\":" + tid +
           ",\"args\":{\"sort_index\":" + tid + "}}";
  }
  for (const TraceTask& t : tasks)
    for (int r = 0; r < t.width; ++r) {
      out += ",\n";
      append_task(out, t, r);
    }
  out += "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{";
  key(out, "format");
  json::append_string(out, kFormat);
  out += ",\"version\":" + std::to_string(kVersion) + ",";
  key(out, "policy");
  json::append_string(out, meta.policy);
  out += ',';
  key(out, "layout");
  json::append_string(out, meta.layout);
  out += ',';
  key(out, "machine");
  json::append_string(out, meta.machine);
  out += ",\"workers\":" + std::to_string(meta.workers) + ",\"tasks\":" + std::to_string(tasks.size());
  const std::pair<const char*, double> numbers[] = {{"makespan_us", meta.makespan_us},
                                                    {"critical_path_us", meta.critical_path_us},
                                                    {"total_work_us", meta.total_work_us},
                                                    {"lower_bound_us", meta.lower_bound_us}};
  for (const auto& [k, v] : numbers) {
    out += ',';
    key(out, k);
    json::append_number(out, v);
  }
  out += "}}\n";
  return out;
}

}  // namespace

void write_chrome_trace(const std::string& path, const TraceMeta& meta, const std::vector<TraceTask>& tasks) {
  validate(meta, tasks);
  const std::string text = render(meta, tasks);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  CORUN_CHECK(f != nullptr, Status::io_error, "cannot write trace '" << path << "': " << std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(tmp.c_str());
    CORUN_CHECK(false, Status::io_error, "writing trace '" << path << "' failed: " << std::strerror(write_errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    CORUN_CHECK(false, Status::io_error, "cannot write trace '" << path << "': " << ec.message());
  }
}

// ---------------------------------------------------------------------------------------------- reading

namespace {

// A number or null (NaN).
double optional_number(const json::Value& v, const std::string& what) {
  return v.is_null() ? NAN : v.number(what);
}

}  // namespace

TraceFile read_chrome_trace(const std::string& path) {
  const std::string file = "'" + path + "'";
  // Events are read one at a time as the parser reaches them (a trace of 100,000 tasks as a tree would
  // take gigabytes). They come before otherData in the file, so an event error is held back until the
  // file is known to be a corun trace (a foreign file gets "not one corun wrote", not an event complaint),
  // and the cores are checked against otherData.workers afterwards.
  TraceFile tf;
  long copies = 0, copies_needed = 0;
  int max_core = -1;
  size_t max_core_event = 0, max_core_index = 0;
  std::string event_error;
  auto on_event = [&](size_t i, const json::Value& e) {
    if (!event_error.empty()) return;
    try {
      const std::string ev = file + ": traceEvents[" + std::to_string(i) + "]";
      e.object(ev);
      const std::string& ph = e.at("ph", ev).string(ev + ".ph");
      if (ph != "X") return;  // metadata ("M"), and room for later additions such as counters
      const json::Value& args = e.at("args", ev);
      const std::string a = ev + ".args";
      TraceTask t;
      t.op = e.at("name", ev).string(ev + ".name");
      t.node = args.at("node", a).string(a + ".node");
      const std::string& op = args.at("op", a).string(a + ".op");
      CORUN_CHECK(op == t.op, Status::io_error, a << ".op '" << op << "' differs from the event name '" << t.op << "'");
      t.width = static_cast<int>(args.at("width", a).integer(a + ".width", 1, 1 << 20));
      const auto& cores = args.at("cores", a).array(a + ".cores");
      for (size_t c = 0; c < cores.size(); ++c) {
        t.cores.push_back(static_cast<int>(
            cores[c].integer(a + ".cores[" + std::to_string(c) + "]", 0, std::numeric_limits<int>::max())));
        if (t.cores.back() > max_core) {
          max_core = t.cores.back();
          max_core_event = i;
          max_core_index = c;
        }
      }
      CORUN_CHECK(static_cast<int>(t.cores.size()) == t.width, Status::io_error,
                  a << ": width " << t.width << " but " << t.cores.size() << " cores");
      const int rank = static_cast<int>(args.at("team_rank", a).integer(a + ".team_rank", 0, t.width - 1));
      const long tid = e.at("tid", ev).integer(ev + ".tid", 0, std::numeric_limits<int>::max());
      CORUN_CHECK(
          tid == t.cores[static_cast<size_t>(rank)], Status::io_error,
          ev << ": tid " << tid << " is not core " << t.cores[static_cast<size_t>(rank)] << " (cores[team_rank])");
      if (rank > 0) {
        ++copies;
        return;
      }
      copies_needed += t.width - 1;
      t.executor =
          static_cast<int>(args.at("executor", a).integer(a + ".executor", -1, std::numeric_limits<int>::max()));
      t.iteration =
          static_cast<int>(args.at("iteration", a).integer(a + ".iteration", 0, std::numeric_limits<int>::max()));
      t.start_us = e.at("ts", ev).number(ev + ".ts");
      const double dur = e.at("dur", ev).number(ev + ".dur");
      CORUN_CHECK(dur >= 0, Status::io_error, ev << ".dur is negative (" << dur << ")");
      t.end_us = t.start_us + dur;
      t.predicted_us = optional_number(args.at("predicted_us", a), a + ".predicted_us");
      t.level_us = optional_number(args.at("level_us", a), a + ".level_us");
      t.critical = args.at("critical", a).boolean(a + ".critical");
      if (const json::Value* r = args.find("reason")) t.reason = r->string(a + ".reason");  // optional
      tf.tasks.push_back(std::move(t));
    } catch (const Error& err) {
      event_error = err.what();
    }
  };
  const json::Value doc = json::parse_file_streaming(path, "traceEvents", on_event);

  CORUN_CHECK(!doc.is_array(), Status::io_error,
              file << " is a Chrome trace in the bare-array form, not a corun trace (those are an object with "
                      "\"traceEvents\" and \"otherData\")");
  CORUN_CHECK(doc.is_object() && doc.find("traceEvents") != nullptr, Status::io_error,
              file << " is not a Chrome trace: expected a JSON object with a \"traceEvents\" array");
  const json::Value* other = doc.find("otherData");
  const json::Value* format = other != nullptr && other->is_object() ? other->find("format") : nullptr;
  CORUN_CHECK(format != nullptr && format->is_string() && format->string("") == kFormat, Status::io_error,
              file << " is a Chrome trace but not one corun wrote (otherData.format is not \"" << kFormat << "\")");
  const std::string od = file + ": otherData";
  const long version = other->at("version", od).integer(od + ".version", 1, std::numeric_limits<int>::max());
  CORUN_CHECK(version == kVersion, Status::io_error,
              file << " is a corun trace of format version " << version << "; this corun reads version " << kVersion);
  doc.at("traceEvents", file).array(file + ": traceEvents");
  if (!event_error.empty()) throw Error(Status::io_error, event_error);

  TraceMeta& m = tf.meta;
  m.policy = other->at("policy", od).string(od + ".policy");
  m.layout = other->at("layout", od).string(od + ".layout");
  m.machine = other->at("machine", od).string(od + ".machine");
  m.workers = static_cast<int>(other->at("workers", od).integer(od + ".workers", 0, 1 << 20));
  m.makespan_us = other->at("makespan_us", od).number(od + ".makespan_us");
  m.critical_path_us = optional_number(other->at("critical_path_us", od), od + ".critical_path_us");
  m.total_work_us = optional_number(other->at("total_work_us", od), od + ".total_work_us");
  m.lower_bound_us = optional_number(other->at("lower_bound_us", od), od + ".lower_bound_us");
  const long expected_tasks = other->at("tasks", od).integer(od + ".tasks", 0, std::numeric_limits<long>::max());

  CORUN_CHECK(max_core < m.workers, Status::io_error,
              file << ": traceEvents[" << max_core_event << "].args.cores[" << max_core_index << "] is " << max_core
                   << ", but otherData.workers is " << m.workers);
  CORUN_CHECK(static_cast<long>(tf.tasks.size()) == expected_tasks, Status::io_error,
              file << " lists " << tf.tasks.size() << " tasks but otherData.tasks says " << expected_tasks
                   << " (truncated or edited?)");
  CORUN_CHECK(
      copies == copies_needed, Status::io_error,
      file << " has " << copies << " team-member slices (team_rank > 0) but its team tasks need " << copies_needed);
  return tf;
}

}  // namespace corun
