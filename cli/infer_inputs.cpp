#include "cli/infer_inputs.hpp"

#include "cli/footprint.hpp"

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

void check_wide_deep_fits(const Args& args, const models::WideDeepConfig& c, long iters) {
  Footprint f = wide_deep_footprint(c);
  f.bytes += 16.0 * static_cast<double>(iters);
  const std::string given = args.given({"--batch", "--iters"});
  check_fits_in_memory(f, given.empty() ? "wide-deep" : given,
                       "wide-deep batch=" + std::to_string(c.batch) + " iters=" + std::to_string(iters),
                       "lower --batch or --iters");
}

}  // namespace corun::cli
