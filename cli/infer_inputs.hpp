// `corun infer`'s repeatable `--input NAME=FILE.npy` flags, shared by the ONNX and the built-in model paths.
#pragma once

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

}  // namespace corun::cli
