// `corun infer`'s repeatable `--input NAME=FILE.npy` flags, shared by the ONNX and the built-in model paths,
// and the memory check of wide-deep, shared by its benchmark and the built-in model path.
#pragma once

#include "cli/args.hpp"

#include <corun/models/wide_deep.hpp>

#include <map>
#include <string>
#include <vector>

namespace corun::cli {

struct InferInputFlags {
  std::vector<char*> rest;                     ///< argv without the --input pairs, for Args (which refuses repeats)
  std::map<std::string, std::string> files;  ///< input name -> .npy path
};

/// Takes every `--input NAME=FILE.npy` out of argv (argv[0..1], "corun infer", stay in `rest`). Throws
/// UsageError on a missing value, a malformed spec, or a name given twice.
InferInputFlags take_input_flags(int argc, char** argv);

/// Refuses (corun::Error, invalid_config) a wide&deep inference at c.batch that does not fit in the memory,
/// counting 16 bytes per timed inference (`iters`: the benchmark keeps every time twice); names the flags
/// of `args` that set them.
void check_wide_deep_fits(const Args& args, const models::WideDeepConfig& c, long iters);

}  // namespace corun::cli
