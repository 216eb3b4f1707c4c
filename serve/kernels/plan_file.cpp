#include "serve/kernels/plan_file.hpp"

#include "base/check.hpp"
#include "base/env.hpp"
#include "base/files.hpp"
#include "base/hash.hpp"
#include "base/json.hpp"
#include "base/parse.hpp"
#include "serve/kernels/step_gemm.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
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
     << exec_mode_name(mode) << " gemm=" << step_gemm_name(step_gemm);
  return os.str();
}

std::string plan_key(const ModelSpec& spec, int batch, int max_seq, int workers, const std::string& machine_key) {
  std::ostringstream os;
  // The step kernels this build can choose from: a build that gains libxsmm plans anew.
  os << spec.str() << " B=" << batch << " T=" << max_seq << " workers=" << workers
     << " step_gemm=" << (have_libxsmm() ? "openblas,libxsmm" : "openblas") << " machine=" << machine_key;
  return os.str();
}

std::string plan_cache_dir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (auto x = env::get("XDG_CACHE_HOME")) return *x + "/corun/serve-plans";
  if (auto h = env::get("HOME")) return *h + "/.cache/corun/serve-plans";
  return "/tmp/corun-serve-plans";
}

std::string plan_path(const std::string& dir, const std::string& key) {
  // FNV-1a of the key; the readable prefix only helps a human find the file.
  const uint64_t h = hash::fnv1a(key, hash::kFnvShortBasis);
  std::string prefix;
  for (char c : key.substr(0, key.find(" machine="))) prefix += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  std::ostringstream os;
  os << dir << "/" << prefix << "-" << std::hex << h << ".plan";
  return os.str();
}

namespace {

constexpr const char* kFormat = "corun-serve-plan";
constexpr int kVersion = 1;
constexpr const char* kReplan = " (delete the file to re-plan)";

std::string where(const std::string& path) {
  return "serve: plan file " + path;
}

// A plan's measured time decides whether it is reused: nan, inf or a negative time is a damaged file.
void check_calibrated_ms(const std::string& path, double ms, const std::string& line) {
  CORUN_CHECK(std::isfinite(ms) && ms >= 0.0, Status::io_error,
              where(path) << line << ": calibrated_ms " << ms << " is not a finite, non-negative time" << kReplan);
}

std::optional<Plan> read_json(const std::string& path, const std::string& text, const std::string& key, Cell cell) {
  const json::Value doc = json::parse(text, where(path));
  const json::Node d(doc, where(path) + ": ");
  CORUN_CHECK(doc.is_object() && doc.contains("format") && doc["format"] == kFormat, Status::io_error,
              where(path) << " is not a corun serving plan (no \"format\": \"" << kFormat << "\")" << kReplan);
  const long version = d.at("version").integer(1, 1000);
  CORUN_CHECK(version == kVersion, Status::io_error,
              where(path) << " has format version " << version << "; this corun reads version " << kVersion << kReplan);
  if (d.at("key").string() != key) return std::nullopt;  // a hash collision or an edited file: plan anew
  Plan p;
  p.hoisted_gates = static_cast<uint32_t>(d.at("hoisted_gates").integer(0, (1 << gate_count(cell)) - 1));
  p.workers = static_cast<int>(d.at("workers").integer(1, 4096));
  p.direction_groups = static_cast<int>(d.at("direction_groups").integer(1, 2));
  p.xi = static_cast<int>(d.at("xi").integer(1, 1 << 20));
  p.xj = static_cast<int>(d.at("xj").integer(1, 1 << 20));
  const std::string& mode = d.at("mode").string();
  CORUN_CHECK(parse_exec_mode(mode, &p.mode), Status::io_error,
              where(path) << ": mode '" << mode << "' is not wcs, per-step, inline or resident" << kReplan);
  // Plans written before the step kernel was a choice ran OpenBLAS, and were timed with it.
  p.step_gemm = StepGemmKernel::openblas;
  if (doc.contains("step_gemm")) {
    const std::string& gemm = d.at("step_gemm").string();
    CORUN_CHECK(parse_step_gemm(gemm, &p.step_gemm), Status::io_error,
                where(path) << ": step_gemm '" << gemm << "' is not auto, openblas or libxsmm" << kReplan);
  }
  p.calibrated_ms = d.at("calibrated_ms").number();
  check_calibrated_ms(path, p.calibrated_ms, "");
  return p;
}

// The text format of earlier versions: a comment, then one "<field> <value>" line per field.
std::optional<Plan> read_text(const std::string& path, std::istream& f, const std::string& key, Cell cell) {
  Plan p;
  p.step_gemm = StepGemmKernel::openblas;  // what every plan of the text format ran
  std::string line;
  int lineno = 0;
  bool key_ok = false;
  int fields = 0;
  while (std::getline(f, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find(' ');
    CORUN_CHECK(sp != std::string::npos, Status::io_error,
                where(path) << " line " << lineno << ": expected '<field> <value>'" << kReplan);
    const std::string name = line.substr(0, sp), value = line.substr(sp + 1);
    if (name == "key") {
      key_ok = value == key;
      continue;
    }
    auto num = [&](long lo, long hi) {
      char* end = nullptr;
      const long v = std::strtol(value.c_str(), &end, 10);
      CORUN_CHECK(end != value.c_str() && *end == '\0' && v >= lo && v <= hi, Status::io_error,
                  where(path) << " line " << lineno << ": " << name << " '" << value << "' is not an integer in [" << lo
                              << ", " << hi << "]" << kReplan);
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
      CORUN_CHECK(
          parse_exec_mode(value, &p.mode), Status::io_error,
          where(path) << " line " << lineno << ": mode '" << value << "' is not wcs, per-step, inline or resident");
      ++fields;
    } else if (name == "calibrated_ms") {
      const std::string at = " line " + std::to_string(lineno);
      const std::optional<double> ms = parse::real(value);
      CORUN_CHECK(ms.has_value(), Status::io_error,
                  where(path) << at << ": calibrated_ms '" << value << "' is not a finite number of milliseconds" << kReplan);
      check_calibrated_ms(path, *ms, at);
    } else {
      CORUN_CHECK(false, Status::io_error,
                  where(path) << " line " << lineno << ": unknown field '" << name << "'" << kReplan);
    }
  }
  if (!key_ok) return std::nullopt;
  CORUN_CHECK(fields == 6, Status::io_error,
              where(path) << " lacks fields (" << fields << " of 6); delete it to re-plan");
  return p;
}

}  // namespace

void save_plan(const std::string& path, const std::string& key, const Plan& plan) {
  const std::filesystem::path p(path);
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  CORUN_CHECK(!ec, Status::io_error,
              "serve: cannot create the plan cache directory " << p.parent_path().string() << ": " << ec.message()
                                                               << " (set CORUN_SERVE_PLANS to a writable directory)");
  const json::Value doc = {{"format", kFormat},
                           {"version", kVersion},
                           {"key", key},
                           {"hoisted_gates", plan.hoisted_gates},
                           {"workers", plan.workers},
                           {"direction_groups", plan.direction_groups},
                           {"xi", plan.xi},
                           {"xj", plan.xj},
                           {"mode", exec_mode_name(plan.mode)},
                           {"step_gemm", step_gemm_name(plan.step_gemm)},
                           {"calibrated_ms", plan.calibrated_ms}};
  write_file_atomically(path, json::dump(doc, 2) + "\n", "the serving plan");
}

std::optional<Plan> load_plan(const std::string& path, const std::string& key, Cell cell) {
  // No plan yet is the normal first run; anything else under the name (a FIFO, a directory, an unreadable
  // file) is an error from read_file, never waited on.
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return std::nullopt;
  const std::string text = read_file(path);
  std::istringstream f(text);
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos || text[start] != '{') {
    std::fprintf(stderr,
                 "corun: warning: read the serving plan %s in the old text format; the next time it is written, it "
                 "will be JSON\n",
                 path.c_str());
    return read_text(path, f, key, cell);
  }
  try {
    return read_json(path, text, key, cell);
  } catch (const Error& e) {
    if (e.status() != Status::io_error || std::string(e.what()).find(kReplan) != std::string::npos) throw;
    throw Error(Status::io_error, e.what() + std::string(kReplan));
  }
}

}  // namespace corun::serve
