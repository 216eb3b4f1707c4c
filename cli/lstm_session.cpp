#include "cli/lstm_session.hpp"

#include "cli/footprint.hpp"

#include <algorithm>

namespace corun::cli {

models::LstmConfig lstm_config_from(const Args& args, std::string& size, bool training) {
  const std::string model = args.str("--model", "");
  if (model.empty()) throw UsageError("--model is required");
  if (model != "lstm" && model != "phased-lstm")
    throw UsageError("unknown model '" + model + "' (available: lstm, phased-lstm)", "--model");
  size = args.str("--size", "small");
  if (size != "small" && size != "medium" && size != "large")
    throw UsageError("--size must be small, medium or large, got '" + size + "'");
  models::LstmConfig cfg = models::lstm_config(size);
  cfg.layers = static_cast<int>(args.positive("--layers", cfg.layers));
  cfg.batch = static_cast<int>(args.positive("--batch", cfg.batch));
  cfg.seq = static_cast<int>(args.positive("--seq", cfg.seq));
  cfg.hidden = static_cast<int>(args.positive("--hidden", cfg.hidden));
  cfg.input = cfg.hidden;
  cfg.phased = model == "phased-lstm";
  // Plain SGD at the LSTM's 0.5 leaves a 4-layer Phased LSTM on its plateau at ln 10 for 100+ steps: the
  // gates (mean about 0.25 at r_on 0.5) scale every layer's update and its gradient. The paper trains with
  // Adam, which normalises that scale; 2.0 is the SGD stand-in measured for `small` (docs/models.md).
  if (cfg.phased) cfg.learning_rate = models::kPhasedLearningRate;
  // Inference: one sequence at a time unless --batch says otherwise (corun infer's default).
  if (!training) cfg.batch = static_cast<int>(args.positive("--batch", 1));
  // Before anything is built: every tensor is allocated as the graph grows.
  const std::string given = args.given({"--layers", "--batch", "--seq", "--hidden"});
  check_fits_in_memory(lstm_footprint(cfg, training), given.empty() ? "--size " + size : given,
                       model + " layers=" + std::to_string(cfg.layers) + " batch=" + std::to_string(cfg.batch) +
                           " seq=" + std::to_string(cfg.seq) + " hidden=" + std::to_string(cfg.hidden),
                       "lower --seq, --hidden, --batch or --layers");
  return cfg;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace corun::cli
