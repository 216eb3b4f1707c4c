#include "serve/kernels/plan_file.hpp"

#include "base/check.hpp"
#include "base/env.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace corun::serve {

std::string Plan::str(Cell cell) const {
  const char* letters = cell == Cell::lstm ? "ifgo" : "rzn";
  std::ostringstream os;
  os << "schedule=hoist{";
  bool comma = false;
  for (int g = 0; g < gate_count(cell); ++g)
    if (hoisted_gates & (1u << g)) {
      os << (comma ? "," : "") << letters[g];
      comma = true;
    }
  os << "} workers=" << workers << " groups=" << direction_groups << " pcp=" << xi << "x" << xj << "x1 mode="
     << exec_mode_name(mode);
  return os.str();
}

std::string plan_key(const ModelSpec& spec, int batch, int max_seq, int workers, const std::string& machine_key) {
  std::ostringstream os;
  os << spec.str() << " B=" << batch << " T=" << max_seq << " workers=" << workers << " machine=" << machine_key;
  return os.str();
}

std::string plan_cache_dir() {
  if (auto d = env::get("CORUN_SERVE_PLANS")) return *d;
  if (auto x = env::get("XDG_CACHE_HOME")) return *x + "/corun/serve-plans";
  if (auto h = env::get("HOME")) return *h + "/.cache/corun/serve-plans";
  return "/tmp/corun-serve-plans";
}

std::string plan_path(const std::string& dir, const std::string& key) {
  // FNV-1a of the key; the readable prefix only helps a human find the file.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  std::string prefix;
  for (char c : key.substr(0, key.find(" machine="))) prefix += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  std::ostringstream os;
  os << dir << "/" << prefix << "-" << std::hex << h << ".plan";
  return os.str();
}

void save_plan(const std::string& path, const std::string& key, const Plan& plan) {
  const std::filesystem::path p(path);
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  CORUN_CHECK(!ec, Status::io_error,
              "serve: cannot create the plan cache directory " << p.parent_path().string() << ": " << ec.message()
                                                               << " (set CORUN_SERVE_PLANS to a writable directory)");
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    CORUN_CHECK(f.good(), Status::io_error, "serve: cannot write the plan file " << tmp);
    f << "# corun serve plan (docs/serving.md)\n"
      << "key " << key << "\n"
      << "hoisted_gates " << plan.hoisted_gates << "\n"
      << "workers " << plan.workers << "\n"
      << "direction_groups " << plan.direction_groups << "\n"
      << "xi " << plan.xi << "\n"
      << "xj " << plan.xj << "\n"
      << "mode " << exec_mode_name(plan.mode) << "\n"
      << "calibrated_ms " << plan.calibrated_ms << "\n";
    CORUN_CHECK(f.good(), Status::io_error, "serve: writing the plan file " << tmp << " failed");
  }
  std::filesystem::rename(tmp, path, ec);
  CORUN_CHECK(!ec, Status::io_error, "serve: cannot rename " << tmp << " to " << path << ": " << ec.message());
}

std::optional<Plan> load_plan(const std::string& path, const std::string& key, Cell cell) {
  std::ifstream f(path);
  if (!f.good()) return std::nullopt;
  Plan p;
  std::string line;
  int lineno = 0;
  bool key_ok = false;
  int fields = 0;
  while (std::getline(f, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find(' ');
    CORUN_CHECK(sp != std::string::npos, Status::io_error,
                "serve: plan file " << path << " line " << lineno << ": expected '<field> <value>' (delete the file to re-plan)");
    const std::string name = line.substr(0, sp), value = line.substr(sp + 1);
    if (name == "key") {
      key_ok = value == key;
      continue;
    }
    auto num = [&](long lo, long hi) {
      char* end = nullptr;
      const long v = std::strtol(value.c_str(), &end, 10);
      CORUN_CHECK(end != value.c_str() && *end == '\0' && v >= lo && v <= hi, Status::io_error,
                  "serve: plan file " << path << " line " << lineno << ": " << name << " '" << value
                                      << "' is not an integer in [" << lo << ", " << hi << "] (delete the file to re-plan)");
      ++fields;
      return static_cast<int>(v);
    };
    if (name == "hoisted_gates") {
      p.hoisted_gates = static_cast<uint32_t>(num(0, (1 << gate_count(cell)) - 1));
    } else if (name == "workers") {
      p.workers = num(1, 4096);
    } else if (name == "direction_groups") {
      p.direction_groups = num(1, 2);
    } else if (name == "xi") {
      p.xi = num(1, 1 << 20);
    } else if (name == "xj") {
      p.xj = num(1, 1 << 20);
    } else if (name == "mode") {
      CORUN_CHECK(parse_exec_mode(value, &p.mode), Status::io_error,
                  "serve: plan file " << path << " line " << lineno << ": mode '" << value
                                      << "' is not wcs, per-step, inline or resident");
      ++fields;
    } else if (name == "calibrated_ms") {
      p.calibrated_ms = std::strtod(value.c_str(), nullptr);
    } else {
      CORUN_CHECK(false, Status::io_error,
                  "serve: plan file " << path << " line " << lineno << ": unknown field '" << name << "' (delete the file to re-plan)");
    }
  }
  if (!key_ok) return std::nullopt;
  CORUN_CHECK(fields == 6, Status::io_error,
              "serve: plan file " << path << " lacks fields (" << fields << " of 6); delete it to re-plan");
  return p;
}

}  // namespace corun::serve
