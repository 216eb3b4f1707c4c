// serve/kernels/plan_file.hpp — the on-disk plan cache: one small JSON file per model, shape and machine.
//
//   {"format": "corun-serve-plan", "version": 1,
//    "key": "lstm E=256 H=256 L=1 uni B=1 T=100 workers=2 machine=corun-1a2b3c4d",
//    "hoisted_gates": 15, "workers": 2, "direction_groups": 1, "xi": 1, "xj": 2, "mode": "wcs",
//    "calibrated_ms": 1.234}
//
// The directory is $CORUN_SERVE_PLANS (read by the Engine's Config, passed down), else $XDG_CACHE_HOME/corun/serve-plans, else
// ~/.cache/corun/serve-plans. A file whose key differs from the request's (hash collision, edited
// file) is ignored; a file that is not a plan is an error naming the file and what is wrong. A plan in the
// text format of earlier versions ("<field> <value>" lines) is still read, with a warning on stderr; plans
// are always written as JSON.
#pragma once

#include <corun/serve.hpp>

#include <optional>
#include <string>

namespace corun::serve {

/// The identity a cached plan is valid for.
std::string plan_key(const ModelSpec& spec, int batch, int max_seq, int workers, const std::string& machine_key);
/// The cache directory: `configured` (Config::serve_plans, from CORUN_SERVE_PLANS) when set, else
/// $XDG_CACHE_HOME/corun/serve-plans, else ~/.cache/corun/serve-plans.
std::string plan_cache_dir(const std::string& configured);
/// `dir`/<readable prefix>-<hash of key>.plan
std::string plan_path(const std::string& dir, const std::string& key);

/// Writes atomically (temporary file + rename); creates the directory. Throws corun::Error on I/O errors.
void save_plan(const std::string& path, const std::string& key, const Plan& plan);
/// The plan in `path` if it exists and its key matches; throws corun::Error when the file is malformed.
std::optional<Plan> load_plan(const std::string& path, const std::string& key, Cell cell);

}  // namespace corun::serve
