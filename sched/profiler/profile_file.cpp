#include "sched/profiler/profile_file.hpp"

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"
#include "base/parse.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace corun::sched {

namespace {

constexpr const char* kFormat = "corun-profile";
constexpr int kVersion = 1;
constexpr const char* kTextHeader = "# corun profile v1";  // the text format of earlier versions
constexpr const char* kRegenerate = "; regenerate it with `corun profile`";

// A measured time: nan, inf or a negative value would make the profile pick a layout at random.
double milliseconds(const json::Node& n) {
  const double v = n.number();
  CORUN_CHECK(std::isfinite(v) && v >= 0.0, Status::io_error,
              n.name() << " must be a finite, non-negative time in milliseconds, not " << v);
  return v;
}

Profile read_json(const std::string& path, const std::string& text) {
  const json::Value doc = json::parse(text, "profile '" + path + "'");
  const json::Node d(doc, "profile '" + path + "': ");
  CORUN_CHECK(doc.is_object() && doc.contains("format") && doc["format"] == kFormat, Status::invalid_config,
              "'" << path << "' is not a corun profile (no \"format\": \"" << kFormat << "\")" << kRegenerate);
  const long version = d.at("version").integer(1, 1000);
  CORUN_CHECK(version == kVersion, Status::invalid_config,
              "profile '" << path << "' has format version " << version << "; this corun reads version " << kVersion
                          << kRegenerate);
  Profile p;
  p.machine_key = d.at("machine_key").string();
  p.cpu = d.at("cpu").string();
  p.workers = static_cast<int>(d.at("workers").integer(1, 1 << 20));
  p.model = d.at("model").string();
  p.size = d.at("size").string();
  p.layout = parse_layout(d.at("layout").string(), "profile '" + path + "' layout");
  for (const json::Node& t : d.at("tried").items()) {
    ProfiledConfig c;
    c.layout = parse_layout(t.at("layout").string(), t.name() + ".layout");
    c.median_ms = milliseconds(t.at("median_ms"));
    c.min_ms = milliseconds(t.at("min_ms"));
    c.runs = static_cast<int>(t.at("runs").integer(0, 1 << 30));
    p.tried.push_back(c);
  }
  return p;
}

// The text format: a header line, key=value lines, one "config=<layout> median_ms=M min_ms=M runs=N" per
// layout tried.
Profile read_text(const std::string& path, std::istream& in) {
  Profile p;
  std::string line;
  int n = 0;
  bool have_layout = false;
  auto bad = [&](const std::string& why) {
    detail::fail(Status::invalid_config, "profile '" + path + "' line " + std::to_string(n) + ": " + why + kRegenerate);
  };
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) continue;  // the header, checked by the caller
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) bad("expected key=value, got '" + line + "'");
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "machine_key") {
      p.machine_key = value;
    } else if (key == "cpu") {
      p.cpu = value;
    } else if (key == "workers") {
      const auto v = parse::integer(value);
      if (!v || *v < 1 || *v > (1 << 20))  // the JSON form's bound; a larger one would wrap in the int
        bad("workers must be an integer from 1 to " + std::to_string(1 << 20) + ", got '" + value + "'");
      p.workers = static_cast<int>(*v);
    } else if (key == "model") {
      p.model = value;
    } else if (key == "size") {
      p.size = value;
    } else if (key == "layout") {
      p.layout = parse_layout(value, "profile '" + path + "' layout");
      have_layout = true;
    } else if (key == "config") {
      std::istringstream fields(value);
      std::string layout, median, min, runs;
      fields >> layout >> median >> min >> runs;
      ProfiledConfig c;
      c.layout = parse_layout(layout, "profile '" + path + "' config");
      auto num = [&](const std::string& field, const char* name) {
        const std::string prefix = std::string(name) + "=";
        if (field.rfind(prefix, 0) != 0) bad("config needs " + prefix + "..., got '" + field + "'");
        const auto v = parse::real(field.substr(prefix.size()));
        if (!v || *v < 0) bad(std::string(name) + " is not a finite, non-negative number: '" + field + "'");
        return *v;
      };
      c.median_ms = num(median, "median_ms");
      c.min_ms = num(min, "min_ms");
      const double n_runs = num(runs, "runs");
      if (n_runs > 1e9) bad("runs is above 1e9: '" + runs + "'");  // would not fit the int
      c.runs = static_cast<int>(n_runs);
      p.tried.push_back(c);
    } else {
      bad("unknown key '" + key + "'");
    }
  }
  if (!have_layout) bad("no layout= line");
  return p;
}

}  // namespace

void write_profile(const std::string& path, const Profile& p) {
  json::Value tried = json::Value::array();
  for (const ProfiledConfig& c : p.tried)
    tried.push_back({{"layout", c.layout.str()}, {"median_ms", c.median_ms}, {"min_ms", c.min_ms}, {"runs", c.runs}});
  const json::Value doc = {{"format", kFormat}, {"version", kVersion},      {"machine_key", p.machine_key},
                           {"cpu", p.cpu},      {"workers", p.workers},     {"model", p.model},
                           {"size", p.size},    {"layout", p.layout.str()}, {"tried", std::move(tried)}};
  write_file_atomically(path, json::dump(doc, 2) + "\n", "the profile");
}

Profile read_profile(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);  // a regular file only: a FIFO or a directory is refused, never waited on
  } catch (const Error& e) {
    throw Error(Status::io_error, std::string(e.what()) + " (the profile named by CORUN_PROFILE); create one with "
                                                          "`corun profile --model M --size S -o FILE`");
  }
  if (text.compare(0, text.find('\n'), kTextHeader) == 0) {
    std::fprintf(stderr,
                 "corun: warning: read the profile '%s' in the old text format; `corun profile` writes profiles "
                 "as JSON: the next time it is written, it will be JSON\n",
                 path.c_str());
    std::istringstream in(text);
    return read_text(path, in);
  }
  const size_t start = text.find_first_not_of(" \t\r\n");
  CORUN_CHECK(start != std::string::npos, Status::invalid_config,
              "profile '" << path << "': empty file" << kRegenerate);
  CORUN_CHECK(text[start] == '{', Status::invalid_config,
              "'" << path << "' is not a corun profile (expected a JSON object with \"format\": \"" << kFormat << "\")"
                  << kRegenerate);
  try {
    return read_json(path, text);
  } catch (const Error& e) {
    if (e.status() != Status::io_error) throw;
    throw Error(Status::invalid_config, e.what() + std::string(kRegenerate));  // malformed, not unreadable
  }
}

}  // namespace corun::sched
