#include "sched/corun/schedule_file.hpp"

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace corun::sched {

namespace {

constexpr const char* kFormat = "corun-schedule";
constexpr int kVersion = 1;
constexpr const char* kTextHeader = "# corun schedule v1";  // the text format of earlier versions

std::string where(const std::string& path) {
  return "CORUN_SCHEDULE '" + path + "'";
}

[[noreturn]] void not_a_schedule(const std::string& path, const std::string& why) {
  detail::fail(Status::invalid_config,
               where(path) + " is not a corun schedule (" + why + "); remove it or point CORUN_SCHEDULE elsewhere");
}

void check_blocks(const std::string& path, const FrozenSchedule& s) {
  for (size_t i = 0; i < s.first.size(); ++i)
    CORUN_CHECK(s.first[i] >= 0 && s.width[i] >= 1 && s.first[i] + s.width[i] <= s.cores, Status::invalid_config,
                where(path) << ": bad or missing block for node " << i << "; remove the file to recompute it");
}

// The text format: the header, "graph <hex hash> nodes <n> cores <c>", then one "<first> <width>" per node.
FrozenSchedule read_text(const std::string& path, std::istream& in) {
  std::string line;
  std::getline(in, line);  // the header, checked by the caller
  std::getline(in, line);
  std::istringstream meta(line);
  std::string g, nw, cw;
  FrozenSchedule s;
  size_t n = 0;
  meta >> g >> std::hex >> s.graph_hash >> std::dec >> nw >> n >> cw >> s.cores;
  CORUN_CHECK(meta && g == "graph" && nw == "nodes" && cw == "cores" && n < (size_t{1} << 30), Status::invalid_config,
              where(path) << " line 2 is malformed: '" << line << "'");
  // The blocks are counted as they are read, not allocated from "nodes": a damaged count must not make a
  // 60-byte file ask for gigabytes (found by tests/fuzz).
  for (int first = 0, width = 0; s.first.size() < n && in >> first >> width;) {
    s.first.push_back(first);
    s.width.push_back(width);
  }
  CORUN_CHECK(s.first.size() == n, Status::invalid_config,
              where(path) << ": bad or missing block for node " << s.first.size() << " (" << n
                          << " nodes); remove the file to recompute it");
  check_blocks(path, s);
  return s;
}

FrozenSchedule read_json(const std::string& path, const std::string& text) {
  const json::Value doc = json::parse(text, where(path));
  const json::Node d(doc, where(path) + ": ");
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat)
    not_a_schedule(path, std::string("no \"format\": \"") + kFormat + "\"");
  const long version = d.at("version").integer(1, 1000);
  CORUN_CHECK(version == kVersion, Status::invalid_config,
              where(path) << " has format version " << version << "; this corun reads version " << kVersion
                          << ": remove the file to recompute it");
  FrozenSchedule s;
  const std::string& hash = d.at("graph").string();
  size_t used = 0;
  try {
    s.graph_hash = std::stoull(hash, &used, 16);
  } catch (const std::exception&) {
  }
  CORUN_CHECK(!hash.empty() && used == hash.size(), Status::invalid_config,
              d.at("graph").name() << " must be a hexadecimal hash, not '" << hash << "'");
  s.cores = static_cast<int>(d.at("cores").integer(1, 1 << 20));
  const long nodes = d.at("nodes").integer(0, 1L << 30);
  const std::vector<json::Node> blocks = d.at("blocks").items();
  CORUN_CHECK(
      static_cast<long>(blocks.size()) == nodes, Status::invalid_config,
      where(path) << " has " << blocks.size() << " blocks for " << nodes << " nodes; remove the file to recompute it");
  for (const json::Node& b : blocks) {
    const std::vector<json::Node> fw = b.items();
    CORUN_CHECK(fw.size() == 2, Status::invalid_config, b.name() << " must be [first core, width]");
    s.first.push_back(static_cast<int>(fw[0].integer(-1, 1 << 20)));
    s.width.push_back(static_cast<int>(fw[1].integer(0, 1 << 20)));
  }
  check_blocks(path, s);
  return s;
}

}  // namespace

// False when nothing is at `path` yet (the first tuned run writes it); anything there, even a FIFO or a
// directory, goes to read_file, which refuses what is not a regular file instead of waiting on it.
bool schedule_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

void check_schedule(const std::string& path) {
  if (!schedule_exists(path)) return;  // written once the schedule is frozen
  const std::string text = read_file(path);
  if (text.rfind(kTextHeader, 0) == 0) return;
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos || text[start] != '{')
    not_a_schedule(path, "first line '" + text.substr(0, text.find('\n')) + "', expected a JSON object");
}

std::optional<FrozenSchedule> read_schedule(const std::string& path) {
  if (!schedule_exists(path)) return std::nullopt;  // not written yet: the first tuned run writes it
  check_schedule(path);
  const std::string text = read_file(path);
  std::istringstream in(text);
  std::string first;
  std::getline(in, first);
  if (first == kTextHeader) {
    std::fprintf(stderr,
                 "corun: warning: read %s in the old text format of schedules; the next time it is written, it "
                 "will be JSON\n",
                 where(path).c_str());
    in.clear();
    in.seekg(0);
    return read_text(path, in);
  }
  try {
    return read_json(path, text);
  } catch (const Error& e) {
    if (e.status() != Status::io_error) throw;
    throw Error(Status::invalid_config, e.what() + std::string("; remove the file to recompute it"));
  }
}

void write_schedule(const std::string& path, const FrozenSchedule& s) {
  char hash[20];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(s.graph_hash));
  json::Value blocks = json::Value::array();
  for (size_t i = 0; i < s.first.size(); ++i) blocks.push_back({s.first[i], s.width[i]});
  const json::Value doc = {{"format", kFormat},       {"version", kVersion}, {"graph", hash},
                           {"nodes", s.first.size()}, {"cores", s.cores},    {"blocks", std::move(blocks)}};
  write_file_atomically(path, json::dump(doc) + "\n", "CORUN_SCHEDULE");
}

}  // namespace corun::sched
