#include "cli/infer_inputs.hpp"

#include "cli/args.hpp"

#include <cstring>

namespace corun::cli {

InferInputFlags take_input_flags(int argc, char** argv) {
  InferInputFlags flags;
  flags.rest.assign(argv, argv + std::min(argc, 2));
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--input") != 0) {
      flags.rest.push_back(argv[i]);
      continue;
    }
    if (i + 1 >= argc) throw UsageError("--input needs NAME=FILE.npy");
    const std::string spec = argv[++i];
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--input takes NAME=FILE.npy, got '" + spec + "'", "--input");
    if (!flags.files.emplace(spec.substr(0, eq), spec.substr(eq + 1)).second)
      throw UsageError("--input " + spec.substr(0, eq) + " given twice", "--input");
  }
  return flags;
}

}  // namespace corun::cli
