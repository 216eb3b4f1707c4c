#include "cli/simulate/model_source.hpp"

#include "cli/simulate/history_file.hpp"
#include "cli/simulate/platform_files.hpp"
#include "cli/simulate/scaling_law.hpp"

#include "base/check.hpp"
#include "base/files.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

namespace corun::cli::sim {

namespace {

namespace fs = std::filesystem;

struct ModelFile {
  fs::path path;
  std::string symbol;  ///< corun_<op>
  std::string key;     ///< the machine key it was calibrated for
};

// corun's model files in `dir` (corun_<op>.<key>); with a non-empty `key`, only that key's.
std::vector<ModelFile> corun_model_files(const fs::path& dir, const std::string& key) {
  std::vector<ModelFile> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t dot = name.find('.');
    if (name.rfind("corun_", 0) != 0 || dot == std::string::npos) continue;
    ModelFile f{entry.path(), name.substr(0, dot), name.substr(dot + 1)};
    // StarPU's lock files and our quarantined copies carry a further suffix: not models.
    if (f.key.find('.') != std::string::npos) continue;
    if (key.empty() || f.key == key) files.push_back(f);
  }
  std::sort(files.begin(), files.end(), [](const ModelFile& a, const ModelFile& b) { return a.symbol < b.symbol; });
  return files;
}

std::string target_source(const SourceRequest& req, const Machine& machine, const fs::path& out) {
  const std::vector<ModelFile> files = corun_model_files(req.target_models, "");
  CORUN_CHECK(!files.empty(), Status::invalid_argument,
              "--models " << req.target_models << " holds no corun_<op>.<key> model file: copy the files of "
                          << "<perf model dir>/codelets/45 calibrated on the target (docs/simulation.md)");
  std::set<std::string> keys;
  int max_width = 0;
  for (const ModelFile& f : files) {
    keys.insert(f.key);
    const HistoryModel m = read_history_file(f.path.string());  // also proves StarPU will parse it
    if (!m.by_width.empty()) max_width = std::max(max_width, m.by_width.rbegin()->first);
  }
  CORUN_CHECK(keys.size() == 1, Status::invalid_argument,
              "--models " << req.target_models << " mixes " << keys.size()
                          << " machine keys: keep the files of one machine only");
  const std::string key = "corun-sim-" + machine.name + "-target";
  for (const ModelFile& f : files)
    write_file_atomically((out / (f.symbol + "." + key)).string(), read_file(f.path.string()), "model");
  return "(a) calibrated on the target: " + std::to_string(files.size()) + " ops from " + req.target_models +
         " (machine key " + *keys.begin() + ", widths up to " + std::to_string(max_width) + ")";
}

std::string law_source(const SourceRequest& req, const Machine& machine, const fs::path& out, const std::string& key) {
  const Law law = parse_law(req.law);
  const fs::path measured = fs::path(req.measured_dir) / "codelets" / "45";
  const std::vector<ModelFile> files = corun_model_files(measured, req.measured_key);
  CORUN_CHECK(!files.empty(), Status::invalid_config,
              "no measured models of machine key '"
                  << req.measured_key << "' in " << measured.string()
                  << ": run the same command natively first, with STARPU_CALIBRATE=1 CORUN_SCHED=lws and at least "
                  << "12 iterations (every op at width 1; docs/simulation.md), or pass --measured-dir / --measured-key");
  ScaleCounts counts;
  for (const ModelFile& f : files) {
    const HistoryModel scaled =
        scale_model(read_history_file(f.path.string()), machine, law, counts, req.use_width2);
    write_file_atomically((out / (f.symbol + "." + key)).string(), history_file_text(scaled), "model");
  }
  return std::string("(b) ") + law_name(law) + " scaling law from measured " +
         (req.use_width2 ? "widths 1-2" : "width 1 (width 2 ignored)") + " of machine key " +
         req.measured_key + ": " + std::to_string(files.size()) + " ops, " + std::to_string(counts.footprints) +
         " footprints (" + std::to_string(counts.with_width2) + " with a width-2 time" +
         (counts.skipped_no_width1 ? ", " + std::to_string(counts.skipped_no_width1) + " without width 1 left out" : "") +
         ")";
}

}  // namespace

Prepared prepare(const SourceRequest& req) {
  Prepared p;
  p.machine = read_machine(req.machine_file);
  const bool target = !req.target_models.empty();
  p.key = "corun-sim-" + p.machine.name + "-" + (target ? std::string("target") : req.law);
  write_platform_files(req.out_dir, p.key, p.machine.cores);
  const fs::path out = fs::path(req.out_dir) / "codelets" / "45";
  std::error_code ec;
  fs::create_directories(out, ec);
  CORUN_CHECK(!ec, Status::io_error, "cannot create '" << out.string() << "': " << ec.message());
  p.source = target ? target_source(req, p.machine, out) : law_source(req, p.machine, out, p.key);
  return p;
}

}  // namespace corun::cli::sim
