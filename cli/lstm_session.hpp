// cli/lstm_session.hpp — the LSTM configuration from the command line (cli/sessions/lstm.cpp), and median().
#pragma once

#include "cli/args.hpp"

#include <corun/engine.hpp>
#include <corun/models/lstm.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace corun::cli {

/// The LSTM of --model lstm | phased-lstm with --size and the shape overrides (flags of model_flags()),
/// read strictly; throws UsageError. `size_out` gets the --size name. Refuses (corun::Error) a model too large
/// for the memory: the training graph, or with `training` false the inference graph at --batch (default 1).
models::LstmConfig lstm_config_from(const Args& args, std::string& size_out, bool training = true);

/// Median of a sample (0 when empty).
double median(std::vector<double> v);

}  // namespace corun::cli
