// `corun infer`'s repeatable `--input NAME=FILE.npy` flags, shared by the ONNX and the built-in model paths,
// the flag rows its three paths (wide-deep benchmark, built-in models, ONNX) spell alike, and the memory
// check of wide-deep, shared by its benchmark and the built-in model path.
#pragma once

#include "cli/args.hpp"

#include <corun/models/wide_deep.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace corun::cli {

struct InferInputFlags {
  std::vector<char*> rest;                     ///< argv without the --input pairs, for Args (which refuses repeats)
  std::map<std::string, std::string> files;  ///< input name -> .npy path
};

/// The flag rows the infer paths share, so that each is spelled once (a path's default goes in the text).
inline FlagSpec infer_batch_flag() { return {"--batch", true, "inputs per inference (default 1)"}; }
inline FlagSpec infer_iters_flag(long default_iters) {
  return {"--iters", true, "timed inferences (default " + std::to_string(default_iters) + ")"};
}
inline FlagSpec infer_warmup_flag(long default_warmup) {
  return {"--warmup", true, "untimed inferences first (default " + std::to_string(default_warmup) + ")"};
}
inline FlagSpec infer_json_flag() {
  return {"--json", true, "write the configuration, the latency summary and every inference's time to this file"};
}
inline FlagSpec help_flag() { return {"--help", false, "show this help"}; }

/// The start of every infer path: runs `parse` (which throws UsageError; its result has `help`), then reads
/// the environment's Config. Answers a usage error (exit 2), --help (the usage on stdout, exit 0) and
/// CORUN_SCHED=help (the policies, exit 0): returns the exit code when the command ends there, nothing when
/// it goes on with `options` and `config`.
template <class Options, class Parse>
std::optional<int> start_infer(Options& options, Config& config, Parse parse, const std::vector<FlagSpec>& specs,
                               const std::string& usage_text) {
  try {
    options = parse();
  } catch (const UsageError& e) {
    return usage_error("infer", e, specs, usage_text);
  }
  if (options.help) {
    std::fputs(usage_text.c_str(), stdout);
    return 0;
  }
  config = Config::from_env();
  if (policy_help_requested(config)) return 0;
  return std::nullopt;
}

/// Takes every `--input NAME=FILE.npy` out of argv (argv[0..1], "corun infer", stay in `rest`). Throws
/// UsageError on a missing value, a malformed spec, or a name given twice.
InferInputFlags take_input_flags(int argc, char** argv);

/// The flags of an infer path that takes --input: every --input pair goes into `files` first (Args refuses
/// repeats), the rest is parsed against `specs`. Throws UsageError.
inline Args args_with_inputs(int argc, char** argv, const std::vector<FlagSpec>& specs,
                             std::map<std::string, std::string>& files) {
  InferInputFlags flags = take_input_flags(argc, argv);
  files = std::move(flags.files);
  return Args(static_cast<int>(flags.rest.size()), flags.rest.data(), 2, specs);
}

/// Refuses (corun::Error, invalid_config) a wide&deep inference at c.batch that does not fit in the memory,
/// counting 16 bytes per timed inference (`iters`: the benchmark keeps every time twice); names the flags
/// of `args` that set them.
void check_wide_deep_fits(const Args& args, const models::WideDeepConfig& c, long iters);

}  // namespace corun::cli
