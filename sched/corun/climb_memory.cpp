#include "sched/corun/climb_memory.hpp"

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace corun::sched {

namespace {

constexpr const char* kFormat = "corun-climbs";
constexpr int kVersion = 1;

std::string hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The climbs the file holds for `kinds_tag`: nothing when it does not exist or was written for other op
// kinds. Throws corun::Error when it exists but is not a climb file.
ClimbMemory::Climbs read_climbs(const std::string& path, uint64_t kinds_tag) {
  ClimbMemory::Climbs climbs;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return climbs;
  const json::Value doc = json::parse_file(path);
  const json::Node d(doc, "'" + path + "': ");
  CORUN_CHECK(doc.is_object() && doc.contains("format") && doc["format"] == kFormat, Status::io_error,
              "'" << path << "' is not a corun climb file (no \"format\": \"" << kFormat << "\")");
  if (d.at("version").integer(1, 1000) != kVersion || d.at("kinds").string() != hex(kinds_tag)) return climbs;
  for (const json::Node& c : d.at("climbs").items()) {
    const int kind = static_cast<int>(c.at("kind").integer(0, 1 << 20));
    const auto footprint = static_cast<uint32_t>(c.at("footprint").integer(0, UINT32_MAX));
    std::vector<std::pair<int, double>>& times = climbs[{kind, footprint}];
    for (const json::Node& point : c.at("times").items()) {
      const std::vector<json::Node> wt = point.items();
      CORUN_CHECK(wt.size() == 2, Status::io_error, point.name() << " must be [width, microseconds]");
      const double t = wt[1].number();
      CORUN_CHECK(t >= 0.0 && std::isfinite(t), Status::io_error, wt[1].name() << " must be a time >= 0");
      times.emplace_back(static_cast<int>(wt[0].integer(1, 1 << 20)), t);
    }
  }
  return climbs;
}

json::Value to_json(const ClimbMemory::Climbs& climbs, uint64_t kinds_tag) {
  json::Value list = json::Value::array();
  for (const auto& [key, times] : climbs) {
    json::Value points = json::Value::array();
    for (const auto& [w, t] : times) points.push_back({w, json::number(t)});
    list.push_back({{"kind", key.first}, {"footprint", key.second}, {"times", std::move(points)}});
  }
  return {{"format", kFormat}, {"version", kVersion}, {"kinds", hex(kinds_tag)}, {"climbs", std::move(list)}};
}

}  // namespace

ClimbMemory::ClimbMemory(std::string path, uint64_t kinds_tag) : path_(std::move(path)), kinds_tag_(kinds_tag) {
  if (path_.empty()) return;
  try {
    climbs_ = read_climbs(path_, kinds_tag_);
  } catch (const Error& e) {
    // A damaged memory costs a search, never the run: the climbs are measured again and the file rewritten.
    std::fprintf(stderr, "corun: warning: ignoring the remembered width climbs: %s\n", e.what());
  }
}

std::optional<double> ClimbMemory::time(int kind, uint32_t footprint, int width) const {
  const auto it = climbs_.find({kind, footprint});
  if (it == climbs_.end()) return std::nullopt;
  for (const auto& [w, t] : it->second)
    if (w == width) return t;
  return std::nullopt;
}

void ClimbMemory::remember(int kind, uint32_t footprint, const std::vector<std::pair<int, double>>& times) {
  if (!enabled() || times.empty()) return;
  const auto known = climbs_.find({kind, footprint});
  if (known != climbs_.end() && known->second == times) return;  // replayed from this memory: nothing new
  climbs_[{kind, footprint}] = times;
  mine_[{kind, footprint}] = times;
}

bool ClimbMemory::save() const {
  if (!enabled() || mine_.empty()) return true;
  try {
    Climbs merged;
    try {
      merged = read_climbs(path_, kinds_tag_);
    } catch (const Error&) {
      // Unreadable now: replaced by what this process measured (the warning was given when it was read).
    }
    for (const auto& [key, times] : mine_) merged[key] = times;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
    write_file_atomically(path_, json::dump(to_json(merged, kinds_tag_)) + "\n", "width climbs");
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corun: warning: the width climbs are not remembered for later runs: %s\n", e.what());
    return false;
  }
}

}  // namespace corun::sched
